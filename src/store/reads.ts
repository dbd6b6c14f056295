// What the engine reads back from the database, beyond single rows: the facts a decision needs that no event brought
// to this process (what another process or a person did since the idle a look judges).
import type { InjectionRow, SessionRow } from "./schema.js";
import { q, type Script } from "./script.js";
import type { ContinuationRef } from "./types.js";

export interface SinceIdle {
  row: SessionRow | undefined;
  /** A continuation of the session is recorded `pending` (by any process). */
  pending: boolean;
  /** When a person cancelled the countdown with the TUI's key since the idle, if they did. */
  userCancelledAt?: number;
  /** A continuation fired since the idle (by any process): it answered it. */
  answeredBy?: ContinuationRef;
}

/**
 * The session's row and, when `idleSince` is given, what answered that idle since (`now`: the reader's time now, on
 * the clock of `idleSince`). One read at a time: on PostgreSQL under Bun, more statements in flight at once meant
 * more of the client's lost answers (see pg/bun-bounded-client.ts).
 */
export function* sinceIdle(sessionId: string, idleSince?: number, now?: number): Script<SinceIdle> {
  const row = yield* q.session(sessionId);
  const asked = idleSince === undefined ? undefined : { since: idleSince, now: now ?? idleSince };
  const userCancelledAt = asked && (yield* q.userCancelledSince(sessionId, asked.since, asked.now));
  const answeredBy = asked && (yield* q.continuedSince(sessionId, asked.since, asked.now));
  const pending = yield* q.hasPendingInjection(sessionId);
  return { row, pending, userCancelledAt, answeredBy };
}

/**
 * The session's latest continuation when its outcome is `unknown` (it may have arrived, nobody could look): no other
 * may go out until it is looked for. Undefined when a later one went out (sent, or pending in a call) since.
 */
export function* unresolvedContinuation(sessionId: string): Script<InjectionRow | undefined> {
  const latest = (yield* q.uncertainIn(sessionId, 0)).find((row) => row.status === "unknown");
  if (!latest) return undefined;
  // The session's newest continuation of all: fired at or after the epoch, on any host's clock.
  const newest = yield* q.continuedSince(sessionId, 0, Number.MAX_SAFE_INTEGER);
  return newest === undefined || newest.injectionId === latest.id ? latest : undefined;
}

/** What a bill is written from beyond the messages: the continuation it is for, and its session's file ledger. */
export function* billContext(
  injectionId: string,
  sessionId: string,
): Script<{ injection: InjectionRow | undefined; row: SessionRow | undefined }> {
  const injection = yield* q.injection(injectionId);
  const row = injection ? yield* q.session(sessionId) : undefined;
  return { injection, row };
}

/** The day of the daily cap: midnight UTC before `now` (PostgreSQL judges it by its own clock). */
export function dayStartUtc(now: number): number {
  return now - (now % 86_400_000);
}

/**
 * What the spend budgets need beyond the session's row: today's spend across the database (only when a daily cap is
 * set) and the session's latest bills (what the next continuation is estimated from).
 */
export function* spending(
  sessionId: string,
  now: number,
  o: { daily: boolean; recent: number },
): Script<{ today?: number; recentBills: Array<{ cost: number; tokens: number }> }> {
  const today = o.daily ? yield* q.spentSince(dayStartUtc(now)) : undefined;
  const recentBills = (yield* q.recentBills(sessionId, o.recent)).reverse();
  return { today, recentBills };
}
