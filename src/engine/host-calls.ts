// Every call to OpenCode is bounded: a host that hangs costs at most the timeout, never a stuck queue.
import { HostHttpError } from "../host/port.js";

export class HostTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not answer within ${ms} ms`);
    this.name = "HostTimeoutError";
  }
}

/**
 * Whether a failed call may still have been carried out by OpenCode. Only an answer that says the request was
 * refused (HTTP 4xx other than 408/429: invalid, unknown session) or a connection that was never made rules it out;
 * a timeout, a reset connection, a 5xx may all come after OpenCode accepted it.
 */
export function mayHaveBeenDelivered(error: unknown): boolean {
  if (error instanceof HostHttpError)
    return !(error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429);
  const text = `${errorMessage(error)} ${errorMessage((error as { cause?: unknown } | null)?.cause ?? "")}`;
  return !/ECONNREFUSED|connection refused|ConnectionRefused|FailedToOpenSocket/i.test(text);
}

export async function withTimeout<T>(what: string, ms: number, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new HostTimeoutError(what, ms));
    }, ms);
  });
  try {
    return await Promise.race([call(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return typeof error === "string" ? error : JSON.stringify(error);
  } catch {
    return String(error);
  }
}
