// How a `session.error` (or an errored assistant message) is classified: each kind blocks continuation differently.

export type ErrorKind = "abort" | "token_limit" | "other";

const ABORT_NAMES: ReadonlySet<string> = new Set(["MessageAbortedError", "AbortError"]);
const TOKEN_LIMIT_NAMES: ReadonlySet<string> = new Set(["ContextOverflowError", "ContextLengthExceededError"]);
const TOKEN_LIMIT_MESSAGE =
  /context[ _-]?(length|window|overflow|limit)|maximum context|too many tokens|prompt is too long|token limit|exceeds? the (model'?s? )?(maximum )?context|input is too long/i;

export function classifyError(name: string | undefined, message: string | undefined): ErrorKind {
  if (name && ABORT_NAMES.has(name)) return "abort";
  if (name === "DOMException" && message && /abort/i.test(message)) return "abort";
  if (name && TOKEN_LIMIT_NAMES.has(name)) return "token_limit";
  if (message && TOKEN_LIMIT_MESSAGE.test(message)) return "token_limit";
  return "other";
}
