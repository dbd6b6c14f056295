// What everyone outside store/ reads back from the database: the reads that are one statement, by the statement's own
// name, and those that take several, by what they answer (the facts a decision needs that no event brought to this
// process: what another process or a person did since the idle a look judges). The statements themselves (script.ts's
// `q`) are for the store's scripts.
import type { ParkFact, VerificationFact } from "../core/decision.js";
import type { CountdownRow, InjectionRow, NoticeRow, ParkRow, SessionRow, VerificationRow } from "./schema.js";
import { q, type Script } from "./script.js";
import type { ContinuationRef, OwedLook, Scope } from "./types.js";

/**
 * The reads that are one statement, under the statement's own name (what each answers: statements.ts). Only reads:
 * a write goes through a change script.
 */
export const {
  session,
  sessionState,
  countdown,
  injection,
  armedFor,
  uncertainIn,
  unbilledOf,
  armedIn,
  pendingIn,
  unbilledIn,
  sessionsToRecheck,
  parkOf,
  lastParkOf,
  parkedIn,
  parksDueIn,
  countParked,
  tuiWatching,
  latestVerification,
  runningVerificationsIn,
} = q;

// ── several scopes at once (a fleet replica's servers) ──────────────────────

/**
 * What a lease tick reads of its scope: `armedIn`, `pendingIn`, `sessionsToRecheck` and `parksDueIn`, in the orders
 * they give.
 */
export interface LeaseRows {
  armed: CountdownRow[];
  pending: InjectionRow[];
  owed: OwedLook[];
  /** Parks due by the same time: their wake time came, or their check is due. */
  parks: ParkRow[];
}

/**
 * The lease rows of each of `scopes` (in their order), sessions owed a look and parks due by `dueBy`: four statements
 * however many scopes there are, so that a replica's idle load does not grow with the servers it follows.
 */
export function* leaseRowsIn(scopes: readonly Scope[], dueBy: number): Script<LeaseRows[]> {
  const key = (scope: Scope) => JSON.stringify([scope.directory, scope.server ?? null]);
  const byScope = new Map(
    scopes.map((scope) => [key(scope), { armed: [], pending: [], owed: [], parks: [] } as LeaseRows]),
  );
  if (byScope.size === 0) return [];
  for (const row of yield* q.armedInScopes(scopes)) byScope.get(key(row))?.armed.push(row);
  for (const row of yield* q.pendingInScopes(scopes)) byScope.get(key(row))?.pending.push(row);
  for (const { directory, server, ...owed } of yield* q.sessionsToRecheckInScopes(scopes, dueBy))
    byScope.get(key({ directory, server }))?.owed.push(owed);
  for (const row of yield* q.parksDueInScopes(scopes, dueBy)) byScope.get(key(row))?.parks.push(row);
  return scopes.map((scope) => byScope.get(key(scope))!);
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
  /** The session's park, while one holds: it waits for its own wake. */
  parked?: ParkFact;
  /** The session's latest check of a finished list that still counts (asked for only when `verify` is set). */
  verification?: VerificationFact;
}

/**
 * The session's row and, when `idleSince` is given, what answered that idle since (`now`: the reader's time now, on
 * the clock of `idleSince`): one statement (`sessionState`), and the latest check of the list when `verify` is set.
 */
export function* sinceIdle(
  sessionId: string,
  idleSince?: number,
  now?: number,
  { verify = false }: { verify?: boolean } = {},
): Script<SinceIdle> {
  const idle = idleSince === undefined ? undefined : { since: idleSince, now: now ?? idleSince };
  const { row, pending, userCancelledAt, answeredBy, park } = yield* q.sessionState(sessionId, idle);
  const parked = park && { parkId: park.id, reason: park.reason, wakeAt: park.wakeAt };
  if (!verify) return { row, pending, userCancelledAt, answeredBy, parked };
  const verification = verificationFact(yield* q.latestVerification(sessionId));
  return { row, pending, userCancelledAt, answeredBy, parked, verification };
}

/**
 * A run as the guard chain weighs it: one cancelled (a person came first) or interrupted (its process died) stands for
 * nothing, and the list is checked again when it is next found finished.
 */
function verificationFact(run: VerificationRow | undefined): VerificationFact | undefined {
  if (!run || (run.state !== "running" && run.state !== "passed" && run.state !== "failed")) return undefined;
  return {
    state: run.state,
    command: run.command,
    afterContinuations: run.afterContinuations,
    failures: run.failures,
    repeated: run.repeated,
    exitCode: run.exitCode,
    durationMs: run.durationMs,
    outputTail: run.outputTail ?? "",
  };
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
