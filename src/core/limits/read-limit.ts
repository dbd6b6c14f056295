// What a failed turn says about a provider's limit: not a limit at all, a limit waiting cannot lift (billing, no
// credit), or a limit that lifts, at a time it names or at a time it does not. Pure: the error's fields and the time
// in, a reading out; the park decides what to do with it.
import { headersOf, jsonOf, resetInBody, resetInHeaders } from "./reset-fields.js";
import { resetInText } from "./reset-text.js";
import { limitSignOf } from "./signs.js";

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
  const sign = limitSignOf(words, evidence.statusCode);
  if (!sign) return { kind: "not_a_limit" };
  if (sign.kind === "billing") return sign;

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
