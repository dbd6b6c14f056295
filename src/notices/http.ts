// One HTTP POST to a channel and what its answer means: delivered, refused for good (a 4xx: the URL, the token or the
// payload is wrong and will be again), or worth another try later (no answer, a network error, a 5xx, 408, 429), with
// the wait the receiver asked for. Never throws; no error text holds the URL's path or query, a token or a secret.
import { hostOf, redact } from "./redact.js";
import { firstLine } from "./text.js";
import type { Channel, DeliveryResult } from "./types.js";

/** The longest wait a receiver may ask for: a notice an hour late is still worth sending, a day late is not news. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** An error's body is read this far, no further: enough for Slack's `invalid_payload` or Discord's JSON. */
const BODY_LIMIT = 4096;

/**
 * The wait a `Retry-After` header asks for (RFC 9110 §10.2.3: seconds, or an HTTP date), capped at an hour; undefined
 * when absent or unreadable.
 */
export function retryAfterMs(header: string | null | undefined, now = Date.now()): number | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  const ms = /^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(0, Math.ceil(ms)), MAX_RETRY_AFTER_MS);
}

/** Discord (and others) say how long to wait in a 429's JSON body too: `{ "retry_after": 1.5 }`, in seconds. */
function retryAfterInBody(body: string): number | undefined {
  try {
    const seconds = (JSON.parse(body) as { retry_after?: unknown }).retry_after;
    return typeof seconds === "number" && seconds >= 0 ? retryAfterMs(String(seconds)) : undefined;
  } catch {
    return undefined;
  }
}

/** An answer's status judged: delivered, or why not and whether to try again. */
export function classify(status: number, retryAfter: string | null, body: string, host: string): DeliveryResult {
  if (status >= 200 && status < 300) return { ok: true, status };
  const detail = firstLine(body);
  const said = `${host} answered ${status}${detail ? `: ${detail}` : ""}`;
  if (status >= 300 && status < 400)
    return { ok: false, retryable: false, error: `${said} (a redirect: configure the URL it leads to)` };
  const retryable = status >= 500 || status === 408 || status === 429;
  if (!retryable) return { ok: false, retryable, error: said };
  const wait = status === 429 || status === 503 ? (retryAfterMs(retryAfter) ?? retryAfterInBody(body)) : undefined;
  return { ok: false, retryable, ...(wait !== undefined ? { retryAfterMs: wait } : {}), error: said };
}

/** At most `limit` bytes of a body, as text; the rest is not read. */
async function readSome(response: Response, limit = BODY_LIMIT): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, limit).toString("utf8");
}

/** Why a request threw, in words without secrets, and always worth another try: the receiver may be back later. */
function thrown(error: unknown, host: string, timeoutMs: number): DeliveryResult {
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError")
    return { ok: false, retryable: true, error: `no answer from ${host} within ${timeoutMs} ms` };
  const why = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(error);
  return { ok: false, retryable: true, error: `could not reach ${host}: ${why}` };
}

export interface Post {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * POST `request` for `channel`: redirects are not followed (a redirected POST loses its body, and a signed one would
 * go to a host nobody configured), and the timeout covers the answer's body too.
 */
export async function post(channel: Channel, request: Post, fetchImpl: typeof fetch = fetch): Promise<DeliveryResult> {
  const host = hostOf(request.url) ?? "the receiver";
  const result = await (async (): Promise<DeliveryResult> => {
    try {
      const response = await fetchImpl(request.url, {
        method: "POST",
        headers: request.headers,
        body: request.body,
        redirect: "manual",
        signal: AbortSignal.timeout(channel.timeoutMs),
      });
      const ok = response.status >= 200 && response.status < 300;
      const body = ok ? (await response.body?.cancel().catch(() => undefined), "") : await readSome(response);
      return classify(response.status, response.headers.get("retry-after"), body, host);
    } catch (error) {
      return thrown(error, host, channel.timeoutMs);
    }
  })();
  return result.ok ? result : { ...result, error: redact(result.error, channel) };
}
