// What everyone outside store/ reads back from the database, each read by its name: single rows and the rows of a
// session or a scope, and the facts a decision needs that no event brought to this process (what another process or a
// person did since the idle a look judges). The statements themselves (script.ts's `q`) are for the store's scripts.
import type { CountdownRow, InjectionRow, NoticeRow, SessionRow } from "./schema.js";
import { q, type Script } from "./script.js";
import type { ArmedRef, ContinuationRef, OwedLook, Scope } from "./types.js";

// ── one row, by its key ──────────────────────────────────────────────────────

export function sessionRow(sessionId: string): Script<SessionRow | undefined> {
  return q.session(sessionId);
}

export function countdownRow(countdownId: string): Script<CountdownRow | undefined> {
  return q.countdown(countdownId);
}

export function continuationRow(injectionId: string): Script<InjectionRow | undefined> {
  return q.injection(injectionId);
}

// ── a session's ──────────────────────────────────────────────────────────────

/** The session's armed countdown (its id, owner and lease), if one is armed. */
export function armedCountdownOf(sessionId: string): Script<ArmedRef | undefined> {
  return q.armedFor(sessionId);
}

/** The session's continuations that failed or whose outcome is unknown, created since `since`: newest first, ≤ 10. */
export function uncertainContinuationsOf(sessionId: string, since: number): Script<InjectionRow[]> {
  return q.uncertainIn(sessionId, since);
}

/** The id of the session's latest continuation that went out (sent, unknown) when it has no bill yet. */
export function unbilledContinuationOf(sessionId: string): Script<string | undefined> {
  return q.unbilledOf(sessionId);
}

// ── a scope's (a directory on a server) ─────────────────────────────────────

/** Armed countdowns, earliest deadline first. */
export function armedCountdownsIn(scope: Scope): Script<CountdownRow[]> {
  return q.armedIn(scope);
}

/** Continuations still `pending` (their prompt call's outcome not recorded), oldest first. */
export function pendingContinuationsIn(scope: Scope): Script<InjectionRow[]> {
  return q.pendingIn(scope);
}

/** Continuations created since `since` that went out (sent, unknown) and have no bill, oldest first. */
export function unbilledContinuationsIn(
  scope: Scope,
  since: number,
): Script<Array<{ injectionId: string; sessionId: string }>> {
  return q.unbilledIn(scope, since);
}

/** Sessions owed a look (`recheck_at`) by `dueBy`. */
export function sessionsOwedALookIn(scope: Scope, dueBy: number): Script<OwedLook[]> {
  return q.sessionsToRecheck(scope, dueBy);
}

// ── several scopes at once (a fleet replica's servers) ──────────────────────

/** What a lease tick reads of its scope: the three reads above, in the orders they give. */
export interface LeaseRows {
  armed: CountdownRow[];
  pending: InjectionRow[];
  owed: OwedLook[];
}

/**
 * The lease rows of each of `scopes` (in their order), sessions owed a look by `dueBy`: three statements however many
 * scopes there are, so that a replica's idle load does not grow with the servers it follows.
 */
export function* leaseRowsIn(scopes: readonly Scope[], dueBy: number): Script<LeaseRows[]> {
  const key = (scope: Scope) => JSON.stringify([scope.directory, scope.server ?? null]);
  const byScope = new Map(scopes.map((scope) => [key(scope), { armed: [], pending: [], owed: [] } as LeaseRows]));
  if (byScope.size === 0) return [];
  for (const row of yield* q.armedInScopes(scopes)) byScope.get(key(row))?.armed.push(row);
  for (const row of yield* q.pendingInScopes(scopes)) byScope.get(key(row))?.pending.push(row);
  for (const { directory, server, ...owed } of yield* q.sessionsToRecheckInScopes(scopes, dueBy))
    byScope.get(key({ directory, server }))?.owed.push(owed);
  return scopes.map((scope) => byScope.get(key(scope))!);
}

// ── who is there ─────────────────────────────────────────────────────────────

/** Whether a TUI that draws the countdowns of `directory` is there now (`now`: the reader's clock, for SQLite). */
export function watchedByTui(directory: string, now: number): Script<boolean> {
  return q.tuiWatching(directory, now);
}

// ── what a decision needs ────────────────────────────────────────────────────

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
 * set), the session's latest bills (what the next continuation is estimated from), and, for a session with none yet
 * under a daily cap, today's latest bills of the database.
 */
export function* spending(
  sessionId: string,
  now: number,
  o: { daily: boolean; recent: number },
): Script<{
  today?: number;
  recentBills: Array<{ cost: number; tokens: number }>;
  recentBillsToday?: Array<{ cost: number; tokens: number }>;
}> {
  const today = o.daily ? yield* q.spentSince(dayStartUtc(now)) : undefined;
  const recentBills = (yield* q.recentBills(sessionId, o.recent)).reverse();
  // A session with no bill of its own is estimated from the day's: only the daily budget reads them.
  if (!o.daily || recentBills.length > 0) return { today, recentBills };
  const recentBillsToday = (yield* q.recentBillsToday(dayStartUtc(now), o.recent)).reverse();
  return { today, recentBills, recentBillsToday };
}

// ── notices ──────────────────────────────────────────────────────────────────

/**
 * What decides a claimed notice's turn: the session's notices still pending on its channel (oldest first), and when
 * those sent on it since `since` went out.
 */
export function* noticeTurnFacts(
  sessionId: string,
  channel: string,
  since: number,
): Script<{ pending: NoticeRow[]; sentAt: number[] }> {
  const pending = yield* q.pendingNoticesOf(sessionId, channel);
  const sentAt = yield* q.noticesSentSince(sessionId, channel, since);
  return { pending, sentAt };
}
