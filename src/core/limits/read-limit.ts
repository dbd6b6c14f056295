// What a failed turn says about a provider's limit: not a limit at all, a limit waiting cannot lift (billing, no
// credit), or a limit that lifts, at a time it names or at a time it does not. Pure: the error's fields and the time
// in, a reading out; the park decides what to do with it.
import { headersOf, jsonOf, resetInBody, resetInHeaders } from "./reset-fields.js";
import { resetInText } from "./reset-text.js";

/** A failed turn's error as OpenCode keeps it (APIError's `data`), or a retry status's message. */
export interface LimitEvidence {
  message?: string;
  statusCode?: number;
  /** `responseHeaders`: lower-cased by the AI SDK, kept on the assistant message for HTTP errors. */
  headers?: unknown;
  /** `responseBody`, whole: JSON for most providers, text or HTML for some. */
  body?: string;
}

/** Where a reset time was read from: a header or body field by name, or the words of the message. */
export type ResetSource = { field: string } | { text: string };

export type LimitReading =
  | { kind: "not_a_limit" }
  /** Waiting cannot lift it: no credit, a spent balance, a plan without the model. `why` is the sign found. */
  | { kind: "billing"; why: string }
  /** A limit that lifts at `at` (epoch ms), read from `source`. */
  | { kind: "lifts_at"; at: number; source: ResetSource }
  /** A limit that lifts, but says nothing of when. */
  | { kind: "lifts_unsaid" };

/**
 * Signs that only paying (or a person raising a cap) lifts it. Checked before any reset time: a 429 can be a billing
 * stop. Not "exceeded your current quota": Gemini says it of a per-minute quota that lifts in seconds. OpenCode's own
 * words for OpenAI's `insufficient_quota` and `usage_not_included` stream errors are here too, for when no body came.
 */
const BILLING =
  /insufficient_quota|credit_balance_exhausted|(?:organization|project)_spend_limit_exceeded|requires more credits|insufficient (?:credits|balance|funds)|CreditsError|MonthlyLimitError|UserLimitError|usage_not_included|payment required|monthly spend limit|out of credits|Quota exceeded\. Check your plan and billing details|with your ChatGPT plan, upgrade/i;
/** HTTP statuses that are billing by their nature. */
const BILLING_STATUS = new Set([402]);
/** Signs of a limit that lifts by itself: a rate, usage or quota window. */
const LIMIT =
  /rate[ _-]?limit|usage limit|too many requests|too_many_requests|quota|resource[ _]exhausted|RESOURCE_EXHAUSTED|limit (?:reached|exceeded|will reset)|hit your (?:\w+ )?limit|UsageLimitError|RateLimitError|usage_limit_reached|\btry again (?:later|in|at)\b/i;
const LIMIT_STATUS = new Set([429]);

export interface ReadOptions {
  /** The zone of a time said without one: the machine's, where the person reads it. */
  localZone: string;
}

/** Everything the evidence says, in one text: the message, then the body (with JSON's escapes as written). */
function wordsOf(evidence: LimitEvidence): string {
  return [evidence.message, evidence.body].filter((t): t is string => typeof t === "string").join("\n");
}

export function readLimit(evidence: LimitEvidence, now: number, options: ReadOptions): LimitReading {
  const words = wordsOf(evidence);
  const billing = BILLING.exec(words);
  if (billing) return { kind: "billing", why: billing[0] };
  if (evidence.statusCode !== undefined && BILLING_STATUS.has(evidence.statusCode))
    return { kind: "billing", why: `HTTP ${evidence.statusCode}` };
  const isLimit = (evidence.statusCode !== undefined && LIMIT_STATUS.has(evidence.statusCode)) || LIMIT.test(words);
  if (!isLimit) return { kind: "not_a_limit" };

  const fromHeaders = resetInHeaders(headersOf(evidence.headers), now);
  if (fromHeaders) return { kind: "lifts_at", at: fromHeaders.at, source: { field: fromHeaders.field } };
  const body = jsonOf(evidence.body);
  const fromBody = body && resetInBody(body, now);
  if (fromBody) return { kind: "lifts_at", at: fromBody.at, source: { field: fromBody.field } };
  // A JSON body's message is text too: read it unescaped.
  const bodyMessage = body ? messageIn(body) : undefined;
  for (const text of [evidence.message, bodyMessage, evidence.body]) {
    if (!text) continue;
    const said = resetInText(text, now, options.localZone);
    if (said) return { kind: "lifts_at", at: said.at, source: { text: said.said } };
  }
  return { kind: "lifts_unsaid" };
}

function messageIn(body: Record<string, unknown>): string | undefined {
  const error = body.error;
  if (typeof error === "string") return error;
  if (error !== null && typeof error === "object") {
    const message = (error as Record<string, unknown>).message;
    if (typeof message === "string") return message;
  }
  return typeof body.message === "string" ? body.message : undefined;
}
