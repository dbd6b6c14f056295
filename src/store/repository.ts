// Every state change of the enforcer as one function: one IMMEDIATE transaction (read-then-write from several
// processes must not hit SQLITE_BUSY_SNAPSHOT), statements prepared once, and the audit rows of the decision
// written in the same transaction as the change they explain.
import { and, asc, desc, eq, gte, inArray, isNotNull, lte, sql } from "drizzle-orm";
import type { AuditEntry, CancelReason, ExpireReason, SkipReason, StopSource } from "../core/reasons.js";
import type { SessionPatch } from "../core/transitions.js";
import type { Db, Store } from "./open.js";
import {
  auditEvents,
  countdowns,
  injections,
  sessions,
  type CountdownRow,
  type InjectionRow,
  type SessionRow,
} from "./schema.js";

export type { AuditEntry };

export interface SessionScope {
  sessionId: string;
  directory: string;
}

export interface NewCountdown extends SessionScope {
  id: string;
  armedAt: number;
  deadlineAt: number;
  owner: string;
  leaseUntil: number;
  attempt: number;
  todosOpen: number | null;
  todosTotal: number | null;
}

export interface NewInjection extends SessionScope {
  id: string;
  countdownId: string;
  messageId: string | null;
  createdAt: number;
  agent: string | null;
  model: string | null;
  variant: string | null;
  todosTotal: number;
  todosOpen: number;
  attempt: number;
  /** JSON of the session columns set once the continuation is known to have gone out. */
  onSent?: string | null;
  owner: string;
  leaseUntil: number;
}

const p = (name: string) => sql.placeholder(name);
/** `set()` takes SQL rather than bare placeholders; the value is still bound when the prepared statement runs. */
const ps = (name: string) => sql`${sql.placeholder(name)}`;

const PATCHABLE = [
  "parentId",
  "projectId",
  "stoppedAt",
  "stopSource",
  "recoveringSince",
  "lastErrorAt",
  "lastErrorName",
  "lastErrorKind",
  "lastErrorRetryAfterMs",
  "errorStreak",
  "abortedAt",
  "tokenLimitAt",
  "continuations",
  "stagnantContinuations",
  "unproductiveReplies",
  "todoSnapshot",
  "consecutiveFailures",
  "backoffUntil",
  "lastUserMessageAt",
  "pausedAt",
  "pauseMessageId",
  "pauseBaseline",
  "recheckAt",
  "notifiedStop",
  "agent",
  "modelProvider",
  "modelId",
  "variant",
  "deletedAt",
] as const;
type Patchable = (typeof PATCHABLE)[number];
export type SessionUpdate = SessionPatch & Partial<Pick<SessionRow, "parentId" | "projectId" | "deletedAt">>;

function prepare(db: Db) {
  const sessionSet = Object.fromEntries(PATCHABLE.map((k) => [k, ps(k)])) as Record<Patchable, ReturnType<typeof ps>>;
  return {
    getSession: db
      .select()
      .from(sessions)
      .where(eq(sessions.sessionId, p("sessionId")))
      .limit(1)
      .prepare(),
    insertSession: db
      .insert(sessions)
      .values({
        sessionId: p("sessionId"),
        directory: p("directory"),
        parentId: p("parentId"),
        projectId: p("projectId"),
        createdAt: p("now"),
        updatedAt: p("now"),
      })
      .onConflictDoNothing()
      .prepare(),
    writeSession: db
      .update(sessions)
      .set({ ...sessionSet, updatedAt: ps("updatedAt") })
      .where(eq(sessions.sessionId, p("sessionId")))
      .prepare(),
    insertAudit: db
      .insert(auditEvents)
      .values({
        at: p("at"),
        sessionId: p("sessionId"),
        directory: p("directory"),
        event: p("event"),
        reason: p("reason"),
        detail: p("detail"),
      })
      .prepare(),
    armedFor: db
      .select({ id: countdowns.id, owner: countdowns.owner, leaseUntil: countdowns.leaseUntil })
      .from(countdowns)
      .where(and(eq(countdowns.sessionId, p("sessionId")), eq(countdowns.state, "armed")))
      .limit(1)
      .prepare(),
    getCountdown: db
      .select()
      .from(countdowns)
      .where(eq(countdowns.id, p("id")))
      .limit(1)
      .prepare(),
    insertCountdown: db
      .insert(countdowns)
      .values({
        id: p("id"),
        sessionId: p("sessionId"),
        directory: p("directory"),
        armedAt: p("armedAt"),
        deadlineAt: p("deadlineAt"),
        state: "armed",
        owner: p("owner"),
        leaseUntil: p("leaseUntil"),
        attempt: p("attempt"),
        todosOpen: p("todosOpen"),
        todosTotal: p("todosTotal"),
      })
      .prepare(),
    endCountdown: db
      .update(countdowns)
      .set({ state: ps("state"), endedAt: ps("now"), endReason: ps("reason"), leaseUntil: null })
      .where(and(eq(countdowns.id, p("id")), eq(countdowns.state, "armed")))
      .prepare(),
    claimCountdown: db
      .update(countdowns)
      .set({ state: "fired", endedAt: ps("now"), endReason: null, leaseUntil: null })
      .where(and(eq(countdowns.id, p("id")), eq(countdowns.state, "armed"), eq(countdowns.owner, p("owner"))))
      .prepare(),
    takeOverCountdown: db
      .update(countdowns)
      .set({ owner: ps("owner"), leaseUntil: ps("leaseUntil") })
      .where(
        // Compare-and-swap on the owner the caller saw: of two processes adopting the same orphan, one wins.
        and(
          eq(countdowns.id, p("id")),
          eq(countdowns.state, "armed"),
          sql`${countdowns.owner} IS ${p("expectedOwner")}`,
        ),
      )
      .prepare(),
    armedInScope: db
      .select()
      .from(countdowns)
      .where(and(eq(countdowns.state, "armed"), eq(countdowns.directory, p("directory"))))
      .orderBy(asc(countdowns.deadlineAt))
      .prepare(),
    renewLeases: db
      .update(countdowns)
      .set({ leaseUntil: ps("leaseUntil") })
      .where(and(eq(countdowns.owner, p("owner")), eq(countdowns.state, "armed")))
      .prepare(),
    releaseLeases: db
      .update(countdowns)
      .set({ owner: null, leaseUntil: null })
      .where(and(eq(countdowns.owner, p("owner")), eq(countdowns.state, "armed")))
      .prepare(),
    insertInjection: db
      .insert(injections)
      .values({
        id: p("id"),
        sessionId: p("sessionId"),
        countdownId: p("countdownId"),
        directory: p("directory"),
        messageId: p("messageId"),
        createdAt: p("createdAt"),
        status: "pending",
        agent: p("agent"),
        model: p("model"),
        variant: p("variant"),
        todosTotal: p("todosTotal"),
        todosOpen: p("todosOpen"),
        attempt: p("attempt"),
        onSent: p("onSent"),
        owner: p("owner"),
        leaseUntil: p("leaseUntil"),
        updatedAt: p("createdAt"),
      })
      .prepare(),
    getInjection: db
      .select()
      .from(injections)
      .where(eq(injections.id, p("id")))
      .limit(1)
      .prepare(),
    finishInjection: db
      .update(injections)
      .set({ status: ps("status"), error: ps("error"), updatedAt: ps("now"), leaseUntil: null })
      .where(and(eq(injections.id, p("id")), eq(injections.status, "pending")))
      .prepare(),
    // A `failed` or `unknown` continuation that turned out to have arrived after all.
    confirmUncertain: db
      .update(injections)
      .set({ status: "sent", updatedAt: ps("now"), leaseUntil: null })
      .where(and(eq(injections.id, p("id")), inArray(injections.status, ["failed", "unknown"])))
      .prepare(),
    uncertainInSession: db
      .select()
      .from(injections)
      .where(
        and(
          eq(injections.sessionId, p("sessionId")),
          gte(injections.createdAt, p("since")),
          inArray(injections.status, ["failed", "unknown"]),
        ),
      )
      .orderBy(desc(injections.createdAt))
      .limit(10)
      .prepare(),
    sessionsToRecheck: db
      .select({ sessionId: sessions.sessionId, recheckAt: sessions.recheckAt })
      .from(sessions)
      .where(
        and(eq(sessions.directory, p("directory")), isNotNull(sessions.recheckAt), lte(sessions.recheckAt, p("dueBy"))),
      )
      .prepare(),
    pendingInSession: db
      .select({ id: injections.id })
      .from(injections)
      .where(and(eq(injections.sessionId, p("sessionId")), eq(injections.status, "pending")))
      .limit(1)
      .prepare(),
    pendingInScope: db
      .select()
      .from(injections)
      .where(and(eq(injections.status, "pending"), eq(injections.directory, p("directory"))))
      .orderBy(asc(injections.createdAt))
      .prepare(),
  };
}

/** What a state change needs to know of the session's armed countdown. */
export type ArmedRef = Pick<CountdownRow, "id" | "owner" | "leaseUntil">;

export class Repository {
  private readonly q: ReturnType<typeof prepare>;
  private readonly store: Pick<Store, "db" | "raw">;

  constructor(store: Pick<Store, "db" | "raw">) {
    this.store = store;
    this.q = prepare(store.db);
  }

  private tx<T>(work: () => T): T {
    return this.store.raw.immediate(work);
  }

  /** Runs several state changes as one transaction (each nested change becomes a savepoint). */
  inTransaction<T>(work: () => T): T {
    return this.tx(work);
  }

  private writeAudit(at: number, scope: Partial<SessionScope>, entry: AuditEntry): void {
    this.q.insertAudit.run({
      at,
      sessionId: scope.sessionId ?? null,
      directory: scope.directory ?? null,
      event: entry.event,
      reason: entry.reason ?? null,
      detail: JSON.stringify(entry.detail ?? {}),
    });
  }

  private ensureSessionRow(scope: SessionScope, now: number): SessionRow {
    const existing = this.q.getSession.get({ sessionId: scope.sessionId });
    if (existing) return existing;
    this.touchSession(scope, now);
    return this.q.getSession.get({ sessionId: scope.sessionId })!;
  }

  /** Creates the session's row if it has none (one statement, no read): enough when nothing of it is patched. */
  private touchSession(scope: SessionScope, now: number): void {
    this.q.insertSession.run({
      sessionId: scope.sessionId,
      directory: scope.directory,
      parentId: null,
      projectId: null,
      now,
    });
  }

  private writeSessionPatch(row: SessionRow, patch: SessionUpdate, now: number): SessionRow {
    const next = { ...row, ...patch, updatedAt: now } as SessionRow;
    const values: Record<string, unknown> = { sessionId: row.sessionId, updatedAt: now };
    for (const key of PATCHABLE) values[key] = next[key] ?? null;
    this.q.writeSession.run(values);
    return next;
  }

  /**
   * Throws unless a write can be committed right now. It never waits for a lock (busy timeout 0 for its duration),
   * so probing a locked file does not stall the host.
   */
  probeWrite(raw: { exec(sql: string): void; all<T>(sql: string): T[] }, busyTimeoutMs: number): void {
    raw.exec("PRAGMA busy_timeout = 0");
    try {
      const version = raw.all<{ user_version: number }>("PRAGMA user_version")[0]?.user_version ?? 0;
      // A committed header write: it fails on a read-only, full, locked or damaged file.
      raw.exec(`PRAGMA user_version = ${(version + 1) % 1_000_000}`);
    } finally {
      raw.exec(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
    }
  }

  // ── sessions ──────────────────────────────────────────────────────────────

  getSession(sessionId: string): SessionRow | undefined {
    return this.q.getSession.get({ sessionId });
  }

  /**
   * Applies a state change to the session (creating its row if needed) and writes the audit rows that explain it. A
   * patch given as a function is computed from the row read in the same transaction.
   */
  updateSession(
    scope: SessionScope,
    patch: SessionUpdate | ((row: SessionRow) => SessionUpdate),
    now: number,
    audit: AuditEntry[] = [],
  ): SessionRow {
    return this.tx(() => {
      const row = this.ensureSessionRow(scope, now);
      const next = this.writeSessionPatch(row, typeof patch === "function" ? patch(row) : patch, now);
      for (const entry of audit) this.writeAudit(now, scope, entry);
      return next;
    });
  }

  audit(now: number, scope: Partial<SessionScope>, entry: AuditEntry): void {
    this.writeAudit(now, scope, entry);
  }

  /**
   * Sets the durable stop and cancels the session's armed countdown (reason `stopped`), in one transaction. Returns
   * false, writing nothing, when the session was already stopped.
   */
  setStop(scope: SessionScope, source: StopSource, now: number): { changed: boolean; cancelled?: ArmedRef } {
    return this.tx(() => {
      const row = this.ensureSessionRow(scope, now);
      if (row.stoppedAt != null) return { changed: false };
      this.writeSessionPatch(row, { stoppedAt: now, stopSource: source }, now);
      this.writeAudit(now, scope, { event: "stopped", reason: source });
      const armed = this.q.armedFor.get({ sessionId: scope.sessionId });
      if (armed) {
        this.q.endCountdown.run({ id: armed.id, state: "cancelled", now, reason: "stopped" });
        this.writeAudit(now, scope, {
          event: "cancelled",
          reason: "stopped",
          detail: { countdownId: armed.id, source },
        });
      }
      return { changed: true, cancelled: armed };
    });
  }

  /**
   * An explicit resume: lifts the durable stop and the takeover pause and starts the loop protections over (`patch`,
   * see core/transitions.ts `afterExplicitResume`), audited `unstopped` with what it lifted. Returns false, writing
   * nothing, when there was nothing to lift or reset.
   */
  resume(scope: SessionScope, source: StopSource, now: number, patch: SessionUpdate): boolean {
    return this.tx(() => {
      const row = this.q.getSession.get({ sessionId: scope.sessionId });
      if (!row) return false;
      const lifted = {
        stop: row.stoppedAt != null,
        pause: row.pausedAt != null,
        counts:
          row.continuations +
            row.stagnantContinuations +
            row.unproductiveReplies +
            row.consecutiveFailures +
            row.errorStreak >
          0,
      };
      if (!lifted.stop && !lifted.pause && !lifted.counts) return false;
      this.writeSessionPatch(row, patch, now);
      this.writeAudit(now, scope, {
        event: "unstopped",
        reason: source,
        detail: {
          stopped: lifted.stop,
          paused: lifted.pause,
          continuations: row.continuations,
          errors: row.errorStreak,
          failures: row.consecutiveFailures,
        },
      });
      return true;
    });
  }

  // ── countdowns ────────────────────────────────────────────────────────────

  /**
   * Ends the session's armed countdown for a person (the TUI's key): durable the moment it commits, so the process
   * that owns the countdown finds it ended at its deadline and cannot claim it, whatever the timing or a restart.
   * Returns the countdown it ended, or undefined when none was armed (already fired, or never armed).
   */
  cancelArmed(
    scope: SessionScope,
    reason: "user_key",
    now: number,
    detail: Record<string, unknown> = {},
  ): ArmedRef | undefined {
    return this.tx(() => {
      const armed = this.q.armedFor.get({ sessionId: scope.sessionId });
      if (!armed) return undefined;
      this.q.endCountdown.run({ id: armed.id, state: "cancelled", now, reason });
      this.writeAudit(now, scope, { event: "cancelled", reason, detail: { countdownId: armed.id, ...detail } });
      return armed;
    });
  }

  armedCountdownFor(sessionId: string): ArmedRef | undefined {
    return this.q.armedFor.get({ sessionId });
  }

  getCountdown(id: string): CountdownRow | undefined {
    return this.q.getCountdown.get({ id });
  }

  /**
   * Arms a countdown, replacing (as `superseded`) any armed one of the same session, unless that one belongs to
   * another process that `respect` says is alive: then nothing is armed and the skip (`in_flight`) is audited, so
   * that two processes watching one session never race to the same continuation.
   */
  armCountdown(
    countdown: NewCountdown,
    detail: Record<string, unknown> = {},
    sessionPatch?: SessionUpdate,
    respect: (armed: ArmedRef) => boolean = () => false,
  ): { superseded?: ArmedRef; heldBy?: ArmedRef } {
    return this.tx(() => {
      // A countdown needs no session row of its own (it carries its directory); one is written only to patch it.
      if (sessionPatch)
        this.writeSessionPatch(this.ensureSessionRow(countdown, countdown.armedAt), sessionPatch, countdown.armedAt);
      const previous = this.q.armedFor.get({ sessionId: countdown.sessionId });
      if (previous && previous.owner !== countdown.owner && respect(previous)) {
        this.writeAudit(countdown.armedAt, countdown, {
          event: "skipped",
          reason: "in_flight",
          detail: { stage: "idle", heldBy: previous.owner, countdownId: previous.id, ...detail },
        });
        return { heldBy: previous };
      }
      if (previous) {
        this.q.endCountdown.run({ id: previous.id, state: "cancelled", now: countdown.armedAt, reason: "superseded" });
        this.writeAudit(countdown.armedAt, countdown, {
          event: "cancelled",
          reason: "superseded",
          detail: { countdownId: previous.id, replacedBy: countdown.id },
        });
      }
      this.q.insertCountdown.run({ ...countdown });
      this.writeAudit(countdown.armedAt, countdown, {
        event: "armed",
        detail: {
          countdownId: countdown.id,
          deadlineAt: countdown.deadlineAt,
          todosOpen: countdown.todosOpen,
          todosTotal: countdown.todosTotal,
          attempt: countdown.attempt,
          ...detail,
        },
      });
      return { superseded: previous };
    });
  }

  /**
   * Ends an armed countdown (cancelled, expired, or closed by a guard) and audits why. Returns false when it was no
   * longer armed: someone else ended it first, and nothing is written.
   */
  endCountdown(
    countdown: Pick<CountdownRow, "id" | "sessionId" | "directory">,
    state: "cancelled" | "expired",
    reason: CancelReason | SkipReason | ExpireReason,
    now: number,
    audit: AuditEntry,
    sessionPatch?: SessionUpdate | ((row: SessionRow) => SessionUpdate),
  ): boolean {
    return this.tx(() => {
      const { changes } = this.q.endCountdown.run({ id: countdown.id, state, now, reason }) as { changes: number };
      if (changes === 0) return false;
      if (sessionPatch) {
        const row = this.ensureSessionRow(countdown, now);
        this.writeSessionPatch(row, typeof sessionPatch === "function" ? sessionPatch(row) : sessionPatch, now);
      }
      this.writeAudit(now, countdown, { ...audit, detail: { countdownId: countdown.id, ...audit.detail } });
      return true;
    });
  }

  /**
   * The exactly-once point: the countdown goes from armed to fired only for its current owner, in the same
   * transaction that records the injection as `pending`. A process that lost its lease (taken over while frozen)
   * or a countdown cancelled meanwhile gets `false` and must not call OpenCode.
   */
  claimForInjection(injection: NewInjection, detail: Record<string, unknown> = {}): boolean {
    return this.tx(() => {
      const claimed = this.q.claimCountdown.run({
        id: injection.countdownId,
        owner: injection.owner,
        now: injection.createdAt,
      }) as {
        changes: number;
      };
      if (claimed.changes === 0) return false;
      this.q.insertInjection.run({ onSent: null, ...injection });
      this.writeAudit(injection.createdAt, injection, {
        event: "fired",
        detail: {
          countdownId: injection.countdownId,
          injectionId: injection.id,
          attempt: injection.attempt,
          ...detail,
        },
      });
      return true;
    });
  }

  /** Armed countdowns of one scope (directory), earliest deadline first. */
  armedInScope(directory: string): CountdownRow[] {
    return this.q.armedInScope.all({ directory });
  }

  /**
   * Takes ownership of an armed countdown whose owner the caller found gone (dead process, expired lease or none),
   * provided its owner is still the one the caller saw.
   */
  takeOver(id: string, expectedOwner: string | null, owner: string, leaseUntil: number): boolean {
    const result = this.q.takeOverCountdown.run({ id, owner, expectedOwner, leaseUntil }) as { changes: number };
    return result.changes > 0;
  }

  renewLeases(owner: string, leaseUntil: number): number {
    return (this.q.renewLeases.run({ owner, leaseUntil }) as { changes: number }).changes;
  }

  releaseLeases(owner: string): number {
    return (this.q.releaseLeases.run({ owner }) as { changes: number }).changes;
  }

  // ── injections ────────────────────────────────────────────────────────────

  getInjection(id: string): InjectionRow | undefined {
    return this.q.getInjection.get({ id });
  }

  hasPendingInjection(sessionId: string): boolean {
    return this.q.pendingInSession.get({ sessionId }) !== undefined;
  }

  /** Closes a `pending` injection; the session patch and the audit rows go with it. False if it was not pending. */
  finishInjection(
    injection: Pick<InjectionRow, "id" | "sessionId" | "directory">,
    status: "sent" | "failed" | "unknown",
    now: number,
    error: string | null,
    audit: AuditEntry[],
    sessionPatch?: (row: SessionRow) => SessionUpdate,
  ): boolean {
    return (
      this.settleInjection(injection, status, now, error, (row) => ({ patch: sessionPatch?.(row), audit })) !==
      undefined
    );
  }

  /**
   * Closes a `pending` injection with what `settle` decides from the session row, read in the same transaction
   * (the failure count of a retry policy, the counts a continuation raises). Undefined if it was not pending.
   */
  settleInjection<T extends { patch?: SessionUpdate; audit: AuditEntry[] }>(
    injection: Pick<InjectionRow, "id" | "sessionId" | "directory">,
    status: "sent" | "failed" | "unknown",
    now: number,
    error: string | null,
    settle: (row: SessionRow) => T,
  ): T | undefined {
    return this.tx(() => {
      const { changes } = this.q.finishInjection.run({ id: injection.id, status, error, now }) as { changes: number };
      if (changes === 0) return undefined;
      return this.applySettlement(injection, now, settle);
    });
  }

  /** A `failed` or `unknown` injection found in the session after all: it becomes `sent`. Undefined if it was not. */
  confirmUncertain<T extends { patch?: SessionUpdate; audit: AuditEntry[] }>(
    injection: Pick<InjectionRow, "id" | "sessionId" | "directory">,
    now: number,
    settle: (row: SessionRow) => T,
  ): T | undefined {
    return this.tx(() => {
      const { changes } = this.q.confirmUncertain.run({ id: injection.id, now }) as { changes: number };
      if (changes === 0) return undefined;
      return this.applySettlement(injection, now, settle);
    });
  }

  private applySettlement<T extends { patch?: SessionUpdate; audit: AuditEntry[] }>(
    injection: Pick<InjectionRow, "id" | "sessionId" | "directory">,
    now: number,
    settle: (row: SessionRow) => T,
  ): T {
    const row = this.ensureSessionRow(injection, now);
    const outcome = settle(row);
    if (outcome.patch) this.writeSessionPatch(row, outcome.patch, now);
    for (const entry of outcome.audit) this.writeAudit(now, injection, entry);
    return outcome;
  }

  /** `failed` and `unknown` continuations of a session since `since`, newest first: they may have arrived after all. */
  uncertainInjections(sessionId: string, since: number): InjectionRow[] {
    return this.q.uncertainInSession.all({ sessionId, since });
  }

  /** Sessions of a scope the enforcer owes a look (see `sessions.recheck_at`) that were due by `dueBy`. */
  sessionsToRecheck(directory: string, dueBy: number): Array<{ sessionId: string; recheckAt: number | null }> {
    return this.q.sessionsToRecheck.all({ directory, dueBy });
  }

  /** `pending` injections of a scope, oldest first (the engine decides which of them are orphaned). */
  pendingInjections(directory: string): InjectionRow[] {
    return this.q.pendingInScope.all({ directory });
  }
}
