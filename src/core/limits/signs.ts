// The signs in a failed turn's words and status that it hit a provider's limit: one that only paying lifts (billing),
// or one that lifts by itself (a rate, usage or quota window). Shared by the error's classification (errors.ts: a
// limit is neither retried after a cooldown nor a stop, it parks) and the reading of when it lifts (read-limit.ts).

/**
 * Signs that only paying (or a person raising a cap) lifts it. Checked before any limit sign: a 429 can be a billing
 * stop. Not "exceeded your current quota": Gemini says it of a per-minute quota that lifts in seconds. OpenCode's own
 * words for OpenAI's `insufficient_quota` and `usage_not_included` stream errors are here too, for when no body came.
 */
const BILLING =
  /insufficient_quota|credit_balance_exhausted|(?:organization|project)_spend_limit_exceeded|requires more credits|insufficient (?:credits|balance|funds)|CreditsError|MonthlyLimitError|UserLimitError|usage_not_included|payment required|monthly spend limit|out of credits|Quota exceeded\. Check your plan and billing details|with your ChatGPT plan, upgrade/i;
/** HTTP statuses that are billing by their nature. */
const BILLING_STATUS = new Set([402]);
/** Signs of a limit that lifts by itself: a rate, usage or quota window. */
const LIMIT =
  /rate[ _-]?limit|usage limit|too many requests|too_many_requests|quota|resource[ _]exhausted|RESOURCE_EXHAUSTED|limit (?:reached|exceeded|will reset)|hit your (?:\w+ )?limit|UsageLimitError|RateLimitError|usage_limit_reached/i;
/** A sign only without a server error's status: "overloaded, please try again later" is a 503, not a limit. */
const TRY_AGAIN = /\btry again (?:later|in|at)\b/i;
const LIMIT_STATUS = new Set([429]);

export type LimitSign = { kind: "billing"; why: string } | { kind: "lifts" } | undefined;

/** `words`: the error's message and body, in one text. */
export function limitSignOf(words: string, statusCode: number | undefined): LimitSign {
  const billing = BILLING.exec(words);
  if (billing) return { kind: "billing", why: billing[0] };
  if (statusCode !== undefined && BILLING_STATUS.has(statusCode)) return { kind: "billing", why: `HTTP ${statusCode}` };
  if ((statusCode !== undefined && LIMIT_STATUS.has(statusCode)) || LIMIT.test(words)) return { kind: "lifts" };
  if ((statusCode === undefined || statusCode < 500) && TRY_AGAIN.test(words)) return { kind: "lifts" };
  return undefined;
}
