// When a notice goes out, and what happens after an attempt: the rate limit per session and channel, folding what waits
// into the latest, and the backoff of a receiver that is down. Pure: the rows and the clock in, a plan out. The sender
// (engine/notice-sender.ts) carries the plans out; docs/notifications.md says the same in words.

/** Retries wait 5 s, then twice as long each time, never more than 2 min: a receiver back after minutes hears soon. */
export const NOTICE_RETRY_BASE_MS = 5_000;
export const NOTICE_RETRY_MAX_MS = 120_000;
/** A notice not delivered within a day is given up: what it said is stale by then. */
export const NOTICE_GIVE_UP_MS = 24 * 3_600_000;
/** The rate limit's window. */
export const NOTICE_WINDOW_MS = 3_600_000;
/** The longest a receiver's Retry-After is honoured. */
const RETRY_AFTER_MAX_MS = 3_600_000;

/** What one attempt to deliver a notice to a channel came to (the channels' `DeliveryResult`). */
export type AttemptResult = { ok: true } | { ok: false; retryable: boolean; retryAfterMs?: number; error: string };

interface PendingNotice {
  id: string;
  createdAt: number;
  nextAttemptAt: number;
}

/** A claimed notice's turn: it goes now, folding in the older ones still waiting, or it waits until `until`. */
export type NoticeTurn = { send: true; folded: string[] } | { send: false; until: number; why: "newer" | "rate_limit" };

/**
 * Whether `notice` goes now. A newer notice of the session on the same channel stands for it (it goes, folding this one
 * in); else, once `perHour` went out in the last hour, it waits for the oldest of them to leave the window; else it
 * goes with every older one still pending folded in.
 */
export function noticeTurn(
  notice: PendingNotice,
  pending: readonly PendingNotice[],
  sentAt: readonly number[],
  perHour: number,
  now: number,
): NoticeTurn {
  const newer = pending.find((p) => p.id !== notice.id && isAfter(p, notice));
  if (newer) return { send: false, until: Math.max(now, newer.nextAttemptAt), why: "newer" };
  const inWindow = sentAt.filter((at) => at > now - NOTICE_WINDOW_MS).sort((a, b) => a - b);
  if (inWindow.length >= perHour)
    return { send: false, until: inWindow[inWindow.length - perHour]! + NOTICE_WINDOW_MS, why: "rate_limit" };
  return { send: true, folded: pending.filter((p) => p.id !== notice.id && isAfter(notice, p)).map((p) => p.id) };
}

const isAfter = (a: PendingNotice, b: PendingNotice) =>
  a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id);

/** What follows an attempt: sent; another attempt at `retryAt`; or given up (`final`). */
export type AfterAttempt = { sent: true } | { sent: false; error: string; retryAt?: number };

/** The `attempt`-th attempt (1 for the first) of a notice created at `createdAt` came to `result` at `now`. */
export function afterAttempt(result: AttemptResult, attempt: number, createdAt: number, now: number): AfterAttempt {
  if (result.ok) return { sent: true };
  if (!result.retryable) return { sent: false, error: result.error };
  const backoff = Math.min(NOTICE_RETRY_MAX_MS, NOTICE_RETRY_BASE_MS * 2 ** Math.max(0, attempt - 1));
  const retryAt = now + Math.max(backoff, Math.min(RETRY_AFTER_MAX_MS, result.retryAfterMs ?? 0));
  if (retryAt - createdAt > NOTICE_GIVE_UP_MS) return { sent: false, error: result.error };
  return { sent: false, error: result.error, retryAt };
}
