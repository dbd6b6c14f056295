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
  return !/ECONNREFUSED|connection refused|ConnectionRefused|FailedToOpenSocket/i.test(withCause(error));
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

/** fetch's "fetch failed" says nothing by itself; the reason (refused, reset, DNS…) is in its cause. */
export function withCause(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause === undefined ? errorMessage(error) : `${errorMessage(error)} (${errorMessage(cause)})`;
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    // JSON.stringify answers undefined (it does not throw) for undefined, a function or a symbol.
    return typeof error === "string" ? error : (JSON.stringify(error) ?? String(error));
  } catch {
    return String(error);
  }
}
