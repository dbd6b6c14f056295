// How an error OpenCode reports (`session.error`, an errored assistant message, or a failed prompt call) is
// classified: each kind blocks continuation differently. Read from the shapes OpenCode 1.18.33 publishes:
// `{ name: "APIError", data: { message, statusCode?, isRetryable, responseHeaders?, responseBody?, metadata? } }`,
// `ContextOverflowError`, `ProviderAuthError`, `MessageAbortedError`, `UnknownError` (see README "How it decides").

import { limitSignOf } from "./limits/signs.js";

/**
 * `abort`: the user stopped the turn. `token_limit`: the context is full; retrying cannot help. `limit`: a provider's
 * rate, usage or quota limit that lifts by itself (429, "usage limit reached"): the session parks until it lifts
 * (docs/waiting.md); one only paying lifts (no credit, billing) is `permanent`. `transient`: the provider or the
 * network may recover (5xx, overloaded, connection errors). `permanent`: retrying with the same request cannot help
 * (401, 403, 400 bad request, a model that does not exist). `other`: anything else.
 */
export type ErrorKind = "abort" | "token_limit" | "limit" | "transient" | "permanent" | "other";

/** What an error says about itself, as far as OpenCode passes it on. */
export interface ErrorReport {
  name?: string;
  message?: string;
  statusCode?: number;
  isRetryable?: boolean;
  responseBody?: string;
  /** The provider's answer's headers, as OpenCode keeps them: where a limit says when it lifts. */
  responseHeaders?: Record<string, unknown>;
  /** The provider's retry-after, in ms from when the error was seen. */
  retryAfterMs?: number;
}

const ABORT_NAMES: ReadonlySet<string> = new Set(["MessageAbortedError", "AbortError"]);
const TOKEN_LIMIT_NAMES: ReadonlySet<string> = new Set(["ContextOverflowError", "ContextLengthExceededError"]);
const PERMANENT_NAMES: ReadonlySet<string> = new Set([
  "ProviderAuthError",
  "ProviderModelNotFoundError",
  "ProviderInitError",
  "ContentFilterError",
  "StructuredOutputError",
]);
const TOKEN_LIMIT_TEXT =
  /context[ _-]?(length|window|overflow|limit)|maximum context|too many tokens|prompt is too long|token limit|exceeds? the (model'?s? )?(maximum )?context|input is too long|context_length_exceeded/i;
// Retrying the same request cannot fix these: a missing model, agent or provider, an exhausted quota or plan.
const PERMANENT_TEXT =
  /\b(model|agent|provider) not found\b|insufficient_quota|exceeded your current quota|billing|FreeUsageLimitError|GoUsageLimitError|usage limit reached|invalid[ _]api[ _]key|incorrect api key/i;
// The same signs OpenCode itself retries on (rate limits, overload, 5xx, connection failures).
const TRANSIENT_TEXT =
  /rate[ _-]?limit|too many requests|too_many_requests|overloaded|service[ _-]unavailable|temporarily unavailable|at capacity|internal server error|server[ _-]error|bad gateway|gateway timeout|upstream connect|fetch failed|failed to fetch|network[ _-]error|connection (error|refused|reset|lost|closed)|socket hang up|econnreset|econnrefused|etimedout|eai_again|enotfound|\btimed? ?out\b|resource[ _]exhausted|try again later/i;

function textMatches(pattern: RegExp, report: ErrorReport): boolean {
  return (
    (report.message !== undefined && pattern.test(report.message)) ||
    (report.responseBody !== undefined && pattern.test(report.responseBody))
  );
}

export function classifyError(report: ErrorReport): ErrorKind {
  const { name, message, statusCode } = report;
  if (name && ABORT_NAMES.has(name)) return "abort";
  if (name === "DOMException" && message && /abort/i.test(message)) return "abort";
  if (name && TOKEN_LIMIT_NAMES.has(name)) return "token_limit";
  if (textMatches(TOKEN_LIMIT_TEXT, report)) return "token_limit";
  const words = [report.message, report.responseBody].filter((t): t is string => t !== undefined).join("\n");
  const limit = limitSignOf(words, statusCode);
  if (limit) return limit.kind === "billing" ? "permanent" : "limit";
  if (textMatches(PERMANENT_TEXT, report)) return "permanent";
  if (report.isRetryable === true) return "transient";
  if (statusCode !== undefined) {
    if (statusCode === 408 || statusCode === 409 || statusCode === 429 || statusCode >= 500) return "transient";
    if (statusCode >= 400) return "permanent";
  }
  if (name && PERMANENT_NAMES.has(name)) return "permanent";
  if (textMatches(TRANSIENT_TEXT, report)) return "transient";
  return "other";
}

/** Kinds after which the enforcer looks again once a cooldown has passed (bounded by `maxRetries`). */
export function isRetryableKind(kind: ErrorKind | string | null | undefined): boolean {
  return kind === "transient" || kind === "other";
}

/**
 * `retry-after-ms` (milliseconds) or `retry-after` (seconds, or an HTTP date) of a provider's answer, as OpenCode
 * keeps them in `error.data.responseHeaders`. `now` turns a date into a delay. Undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Record<string, unknown> | undefined, now: number): number | undefined {
  if (!headers) return undefined;
  const header = (name: string): string | undefined => {
    for (const [key, value] of Object.entries(headers))
      if (key.toLowerCase() === name && typeof value === "string") return value;
    return undefined;
  };
  const ms = Number.parseFloat(header("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return Math.ceil(ms);
  const after = header("retry-after");
  if (after === undefined) return undefined;
  const seconds = Number.parseFloat(after);
  if (Number.isFinite(seconds) && seconds >= 0 && /^\s*[\d.]+\s*$/.test(after)) return Math.ceil(seconds * 1000);
  const date = Date.parse(after);
  return Number.isFinite(date) && date > now ? date - now : undefined;
}
