// What a database must provide for the enforcer's state changes: these statements, and a transaction to run them in
// (see script.ts). Each is one unit of work on the backend — a read, or a write with the audit row that explains it —
// and none decides anything: the rules live in the transaction scripts of changes/, written once for every backend.
// Each backend writes each statement once, under its name here, its SQL beside the code that runs it: SQLite
// synchronously (sqlite/statements/), PostgreSQL asynchronously (pg/statements/); a backend that lacks one does not
// compile. Outside store/, the reads among them are run by the same names through reads.ts.
import type { AuditValues } from "./audit-row.js";
import type { SessionColumns } from "./session-columns.js";
import type {
  ArmedRef,
  ContinuationRef,
  InScope,
  NewCountdown,
  NewInjection,
  NewNotice,
  NewPark,
  NewVerification,
  NoticeSettlement,
  ParkEnding,
  OwedLook,
  ParkTerms,
  Scope,
  SessionScope,
  SessionState,
  VerificationEnd,
} from "./types.js";
import type { CountdownRow, InjectionRow, NewBill, NoticeRow, ParkRow, SessionRow, VerificationRow } from "./schema.js";

/** The tables retention deletes from, and what in each is settled history (`?` is the cutoff, epoch ms). */
export type HistoryTable =
  | "audit_events"
  | "injections"
  | "countdowns"
  | "parks"
  | "sessions"
  | "continuation_bills"
  | "notices"
  | "verifications";

export interface Statements {
  // ── sessions ────────────────────────────────────────────────────────────────
  session(sessionId: string): SessionRow | undefined;
  /**
   * The session's row with what a decision needs of the other tables (a continuation pending, its park, its armed
   * countdown), in one statement. With `idle` (the idle a look judges, and the reader's time now, on its clock): also
   * when a person last cancelled with the TUI's key since that idle, and the latest continuation fired since, as
   * `continuedSince` finds it.
   */
  sessionState(sessionId: string, idle?: { since: number; now: number }): SessionState;
  /** A new row for the session; nothing when it has one. */
  insertSession(scope: SessionScope, now: number): void;
  /** Writes every column a change may set (see session-columns.ts), and `updated_at`, from `row`. */
  writeSession(row: SessionRow): void;
  /**
   * Writes `columns` and `updated_at` to the session's row, created first if it has none, in one statement: the row
   * as written. For a change that does not depend on the row (one that does reads it first, and `writeSession`s it).
   */
  upsertSession(scope: SessionScope, columns: SessionColumns, now: number): SessionRow;
  /**
   * A woken session's look owed and the note its next continuation carries, and nothing else of its row (a wake
   * depends on none of it): the look owed as written; undefined, and nothing written, when the session has no row.
   */
  noteWake(
    sessionId: string,
    wake: Pick<SessionRow, "recheckAt" | "owedSince" | "wakeNote">,
    now: number,
  ): OwedLook | undefined;
  /** Sessions of a scope owed a look (`recheck_at`) by `dueBy`. */
  sessionsToRecheck(scope: Scope, dueBy: number): OwedLook[];
  /** `sessionsToRecheck` of several scopes in one statement, each row with its scope. */
  sessionsToRecheckInScopes(scopes: readonly Scope[], dueBy: number): Array<InScope<OwedLook>>;

  // ── the audit log ───────────────────────────────────────────────────────────
  audit(row: AuditValues): void;
  auditMany(rows: AuditValues[]): void;

  // ── countdowns ──────────────────────────────────────────────────────────────
  countdown(id: string): CountdownRow | undefined;
  /** The session's armed countdown (its id, owner and lease), if one is armed. */
  armedFor(sessionId: string): ArmedRef | undefined;
  /** Armed countdowns of a scope, earliest deadline first. */
  armedIn(scope: Scope): CountdownRow[];
  /** `armedIn` of several scopes in one statement (a fleet replica's servers), earliest deadline first. */
  armedInScopes(scopes: readonly Scope[]): CountdownRow[];
  /**
   * Whether another process's lease still holds, judged now: SQLite by its pid on this host and its lease; PostgreSQL
   * by its heartbeat on the database's clock.
   */
  ownerAlive(owner: string | null, leaseUntil: number | null, now: number): boolean;
  /** The countdown, armed, and its `armed` audit row. */
  insertCountdown(countdown: NewCountdown, armed: AuditValues): void;
  /** Armed → `state` with its audit row; false (and nothing written) when it was no longer armed. */
  endCountdown(id: string, state: "cancelled" | "expired", reason: string, now: number, audit: AuditValues): boolean;
  /**
   * Armed → fired, only for `owner` (and on PostgreSQL only while the database counts its heartbeat as fresh: a
   * process cut off past its lease may have been replaced).
   */
  claimCountdown(id: string, owner: string, now: number): boolean;
  /**
   * Takes over those of `ids` still armed and held by `expected` (compare-and-swap, in one statement); the ids taken.
   * Rows another process is taking over at this moment are skipped, not waited for.
   */
  takeOver(ids: readonly string[], expected: string | null, owner: string, leaseUntil: number): string[];
  /**
   * Those of `ids` still armed and held by `expected` → expired with `reason` (compare-and-swap, in one statement);
   * the ids expired. Their audit rows are the caller's to write.
   */
  expireOrphans(ids: readonly string[], expected: string | null, reason: string, now: number): string[];
  renewLeases(owner: string, leaseUntil: number): number;
  /** Clears the owner of its armed countdowns in any of several scopes, for successors to adopt at once. */
  releaseLeases(owner: string, scopes: readonly Scope[]): number;

  // ── verifications (runs of the `verify` command) ─────────────────────────────
  /**
   * The run, `running`, and its `verify_started` audit row; false, and nothing written, when a run of the session is
   * running already (verifications_one_running_per_session): of two processes, one runs the session's check.
   */
  insertVerification(verification: NewVerification, started: AuditValues): boolean;
  /**
   * A running run ended as `end` says (its lease cleared); `owner`: only while that process holds it (null: whoever
   * does, for a person's cancel or a dead owner's run). False, and nothing written, when it was not running so.
   */
  endVerification(id: string, owner: string | null, end: VerificationEnd): boolean;
  /** The session's latest run, whatever its state (the latest started, by id between equals). */
  latestVerification(sessionId: string): VerificationRow | undefined;
  /** The session's latest failed run (what a new failure is compared with). */
  latestFailedVerification(sessionId: string): VerificationRow | undefined;
  /** The runs of this scope running now, oldest first (a lease tick finds those whose process died). */
  runningVerificationsIn(scope: Scope): VerificationRow[];
  /** A run still `owner`'s and running stays its own until `leaseUntil`; false when it no longer is (a cancel). */
  renewVerification(id: string, owner: string, leaseUntil: number): boolean;

  // ── parks ───────────────────────────────────────────────────────────────────
  /** The session's park while it holds (`parked`), if one does. */
  parkOf(sessionId: string): ParkRow | undefined;
  /** The session's latest park, whatever its state (the latest parked at, by id between equals). */
  lastParkOf(sessionId: string): ParkRow | undefined;
  /**
   * The park, `parked`, and its `parked` audit row; false, and nothing written, when a park of the session holds
   * already (parks_one_parked_per_session): then it is parked again in place (`reparkPark`).
   */
  insertPark(park: NewPark, parked: AuditValues): boolean;
  /**
   * The session's park, while it holds and is one `ending` allows, ended as `state` (its end, its lease cleared): the
   * row as it ended; undefined (and nothing written) when no such park holds: of two writers, one ends it. Found and
   * ended in one statement, without a read before it; its audit row, which names it, is the caller's next.
   */
  endPark(
    sessionId: string,
    state: "woke" | "unparked",
    reason: string,
    now: number,
    ending: ParkEnding,
  ): ParkRow | undefined;
  /**
   * A parked park given new terms (a backoff's next step, OpenCode's retry found to be a limit), keeping its id and
   * `since`, with its `parked` audit row; false (and nothing written) when it was no longer parked.
   */
  reparkPark(id: string, terms: ParkTerms, parked: AuditValues): boolean;
  /**
   * The park's check taken for its run number `runs + 1`, its next one set for `nextCheckAt`; false (and nothing
   * written) when it was no longer parked or another process took that run: of two runners, one runs it.
   */
  claimCheck(id: string, runs: number, nextCheckAt: number): boolean;
  /** What the park's check printed last, when it did not pass; false when it was no longer parked. */
  recordCheckOutput(id: string, output: string): boolean;
  /** Parked parks of a scope whose wake time or next check comes by `dueBy`, earliest first. */
  parksDueIn(scope: Scope, dueBy: number): ParkRow[];
  /** `parksDueIn` of several scopes in one statement, earliest first. */
  parksDueInScopes(scopes: readonly Scope[], dueBy: number): ParkRow[];
  /** Parks held now in the whole database, of every scope (the service's gauge of parked sessions). */
  countParked(): number;
  /** Every parked park of a scope, earliest wake first. */
  parkedIn(scope: Scope): ParkRow[];

  // ── injections ──────────────────────────────────────────────────────────────
  injection(id: string): InjectionRow | undefined;
  /** The injection, `pending`. */
  insertInjection(injection: NewInjection): void;
  /** Pending → `status`; false when it was not pending. */
  finishInjection(id: string, status: "sent" | "failed" | "unknown", error: string | null, now: number): boolean;
  /** Failed or unknown → sent; false when it was neither. */
  confirmInjection(id: string, now: number): boolean;
  /**
   * The latest continuation of the session fired at or after `since` and not refused (`failed`). `since` and `now` are
   * the reader's clock. SQLite (one host, one clock) compares `since` with the firing process's time; PostgreSQL,
   * whose replicas' clocks may disagree, asks for one fired within the `now - since` ms before this read, by the
   * database's clock.
   */
  continuedSince(sessionId: string, since: number, now: number): ContinuationRef | undefined;
  /** `pending` injections of a scope (their prompt call's outcome not recorded), oldest first. */
  pendingIn(scope: Scope): InjectionRow[];
  /** `pendingIn` of several scopes in one statement, oldest first. */
  pendingInScopes(scopes: readonly Scope[]): InjectionRow[];
  /** `failed` and `unknown` injections of a session since `since`, newest first (at most 10). */
  uncertainIn(sessionId: string, since: number): InjectionRow[];

  // ── what continuations cost ─────────────────────────────────────────────────
  /** The bill of one continuation; false (and nothing written) when it has one already: the first writer's stands. */
  insertBill(bill: NewBill): boolean;
  /** What every continuation of the database cost since `dayStart` (the reader's clock; PostgreSQL's own: today, UTC). */
  spentSince(dayStart: number): number;
  /** The latest bills of a session, newest first (at most `limit`). */
  recentBills(sessionId: string, limit: number): Array<{ cost: number; tokens: number }>;
  /**
   * The latest bills of the whole database recorded since `dayStart` (the reader's clock; PostgreSQL's own: today,
   * UTC), newest first (at most `limit`).
   */
  recentBillsToday(dayStart: number, limit: number): Array<{ cost: number; tokens: number }>;
  /**
   * Adds a bill's cost and tokens to the session's spend in its window, unless the continuation was sent
   * (`continuedAt`) before that window began: before the last real user message or resume, it is history. Only these
   * two columns: the row, with its ledgers, is not rewritten for two sums (recording a bill stays within 1.5× of its
   * raw rows, see BENCHMARKS.md), nor read first.
   */
  addSpend(sessionId: string, cost: number, tokens: number, now: number, continuedAt: number): void;
  /** The id of the session's latest continuation that went out (`sent`, `unknown`), when it has no bill yet. */
  unbilledOf(sessionId: string): string | undefined;
  /** Continuations of a scope created since `since` that went out (`sent`, `unknown`) and have no bill, oldest first. */
  unbilledIn(scope: Scope, since: number): Array<{ injectionId: string; sessionId: string }>;

  // ── notices (the outbox) ──────────────────────────────────────────────────────
  /** The notices of one stop, one per channel, `pending` and due at once. */
  insertNotices(notices: NewNotice[]): void;
  /**
   * Takes up to `limit` notices of a scope on `channels` that are pending, due by `now` and free (no owner, or its
   * lease ran out), for `owner` for `leaseMs`; the rows taken, earliest due first. PostgreSQL judges leases by the
   * database's clock, and skips rows another replica is taking at this moment.
   */
  claimNotices(
    scope: Scope,
    channels: readonly string[],
    owner: string,
    now: number,
    leaseMs: number,
    limit: number,
  ): NoticeRow[];
  /** Writes what became of a notice `owner` holds, and frees it; false when `owner` no longer holds it pending. */
  settleNotice(id: string, owner: string, settlement: NoticeSettlement, now: number): boolean;
  /** The session's pending notices on `channel`, oldest first: what a notice sent folds in, or waits for. */
  pendingNoticesOf(sessionId: string, channel: string): NoticeRow[];
  /** Pending → folded into `into`; how many. */
  foldNotices(ids: readonly string[], into: string, now: number): number;
  /**
   * When the session's notices on `channel` sent at or after `since` were sent, oldest first (the rate limit): their
   * `notified` audit rows, which the session's index of the audit log finds.
   */
  noticesSentSince(sessionId: string, channel: string, since: number): number[];

  // ── who is there ────────────────────────────────────────────────────────────
  /**
   * Whether a TUI that draws the countdowns of `directory` is there now (its `replicas` heartbeat is fresh: on
   * PostgreSQL by the database's clock, on SQLite by `now`).
   */
  tuiWatching(directory: string, now: number): boolean;

  // ── retention ───────────────────────────────────────────────────────────────
  /** Deletes up to `limit` rows of `table` matching `settled` (SQL with one `?`, the cutoff); how many went. */
  deleteHistory(table: HistoryTable, settled: string, cutoff: number, limit: number): number;
  countHistory(table: HistoryTable, settled: string, cutoff: number): number;
}

/** The order `claimNotices` answers in: earliest due first. Neither database orders the rows an UPDATE returns. */
export const earliestDueFirst = (a: NoticeRow, b: NoticeRow): number =>
  a.nextAttemptAt - b.nextAttemptAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Several scopes as the statements that read them all at once bind them: one JSON array of `[directory, server]`
 * pairs (server null: a machine's own), one parameter however many there are.
 */
export const scopesAsJson = (scopes: readonly Scope[]): string =>
  JSON.stringify(scopes.map((scope) => [scope.directory, scope.server ?? null]));
