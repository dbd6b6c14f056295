// The store port over one SQLite connection (better-sqlite3 under Node, bun:sqlite inside OpenCode). Each state change
// is one IMMEDIATE transaction (read-then-write from several processes must not hit SQLITE_BUSY_SNAPSHOT) built from
// the tables' prepared statements, with the audit rows that explain it. The drivers are synchronous: every promise
// returned here is already settled when the method returns.
import type { AuditEntry, StopSource } from "../../core/reasons.js";
import type {
  Adoption,
  ArmOptions,
  ArmResult,
  ArmedRef,
  CountdownEnd,
  ContinuationRef,
  CountdownRef,
  EngineStore,
  InjectionRef,
  NewCountdown,
  NewInjection,
  SessionChange,
  Scope,
  SessionScope,
  SessionUpdate,
  Settlement,
  StopResult,
  StoreProblem,
} from "../port.js";
import type { CountdownRow, InjectionRow, SessionRow } from "../schema.js";
import { sqliteReader, type SqlReader } from "../reader.js";
import { answeredDetail } from "../audit-detail.js";
import { AuditLog } from "./audit-log.js";
import { CountdownTable } from "./countdown-table.js";
import { InjectionTable } from "./injection-table.js";
import type { Store } from "./open.js";
import { ownerMayBeAlive } from "../owner.js";
import { fileIdentity, sqliteProblemOf } from "./problems.js";
import { prune, type PruneReport } from "./retention.js";
import { SessionTable } from "./session-table.js";

/** Orphans adopted per transaction: 2,000 rows hold the write lock (and the event loop) for ~20-40 ms; 500 made a
 * 100k recovery 2x its raw floor in commits and yields alone. */
const ADOPTION_CHUNK = 2000;

const yieldToEvents = () => new Promise<void>((resolve) => setImmediate(resolve));

export class SqliteStore implements EngineStore {
  readonly location: string;
  private readonly sessions: SessionTable;
  private readonly countdowns: CountdownTable;
  private readonly injections: InjectionTable;
  private readonly audit: AuditLog;
  private readonly identity: string | undefined;
  /** Raw SQL for operators (CLI, TUI panel). */
  readonly reader: SqlReader;

  constructor(
    readonly connection: Store,
    private readonly options: { busyTimeoutMs?: number } = {},
  ) {
    this.location = connection.path;
    this.sessions = new SessionTable(connection.db);
    this.countdowns = new CountdownTable(connection.db);
    this.injections = new InjectionTable(connection.db);
    this.audit = new AuditLog(connection.db);
    this.identity = fileIdentity(connection.path);
    this.reader = sqliteReader(connection.raw);
  }

  /** `work` as one IMMEDIATE transaction, its result or error as a settled promise. */
  private tx<T>(work: () => T): Promise<T> {
    return this.now(() => this.connection.raw.immediate(work));
  }

  /** `work` (one statement, or reads) as a settled promise. */
  private now<T>(work: () => T): Promise<T> {
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  // ── reads ───────────────────────────────────────────────────────────────────

  session(sessionId: string): Promise<SessionRow | undefined> {
    return this.now(() => this.sessions.get(sessionId));
  }

  countdown(id: string): Promise<CountdownRow | undefined> {
    return this.now(() => this.countdowns.get(id));
  }

  injection(id: string): Promise<InjectionRow | undefined> {
    return this.now(() => this.injections.get(id));
  }

  hasPendingInjection(sessionId: string): Promise<boolean> {
    return this.now(() => this.injections.hasPending(sessionId));
  }

  userCancelledSince(sessionId: string, since: number): Promise<number | undefined> {
    return this.now(() => this.audit.userCancelledSince(sessionId, since));
  }

  continuedSince(sessionId: string, since: number): Promise<ContinuationRef | undefined> {
    return this.now(() => this.injections.firedSince(sessionId, since));
  }

  armedCountdowns(scope: Scope): Promise<CountdownRow[]> {
    return this.now(() => this.countdowns.armedIn(scope));
  }

  pendingInjections(scope: Scope): Promise<InjectionRow[]> {
    return this.now(() => this.injections.pendingIn(scope));
  }

  uncertainInjections(sessionId: string, since: number): Promise<InjectionRow[]> {
    return this.now(() => this.injections.uncertainIn(sessionId, since));
  }

  sessionsToRecheck(scope: Scope, dueBy: number) {
    return this.now(() => this.sessions.toRecheck(scope, dueBy));
  }

  // ── the builders: every state change is made of these ───────────────────────

  /** Ends an armed countdown with its audit row; false (and nothing written) when it was no longer armed. */
  private end(countdown: CountdownRef, end: CountdownEnd, now: number): boolean {
    if (!this.countdowns.end(countdown.id, end.state, end.audit.reason, now)) return false;
    this.audit.write(now, countdown, end.audit, countdown.id);
    return true;
  }

  private change(scope: SessionScope, now: number, change: SessionChange): SessionRow {
    const row = this.sessions.ensure(scope, now);
    return this.sessions.patch(row, typeof change === "function" ? change(row) : change, now);
  }

  private settle<T extends Settlement>(scope: SessionScope, now: number, settle: (row: SessionRow) => T): T {
    const row = this.sessions.ensure(scope, now);
    const outcome = settle(row);
    if (outcome.patch) this.sessions.patch(row, outcome.patch, now);
    for (const entry of outcome.audit) this.audit.write(now, scope, entry);
    return outcome;
  }

  // ── state changes ───────────────────────────────────────────────────────────

  changeSession(scope: SessionScope, now: number, change: SessionChange, audit: AuditEntry[] = []) {
    return this.tx(() => {
      const row = this.change(scope, now, change);
      for (const entry of audit) this.audit.write(now, scope, entry);
      return row;
    });
  }

  settleSession<T extends Settlement>(scope: SessionScope, now: number, settle: (row: SessionRow) => T): Promise<T> {
    return this.tx(() => this.settle(scope, now, settle));
  }

  recordDecision(scope: SessionScope, now: number, entry: AuditEntry): Promise<void> {
    return this.now(() => this.audit.write(now, scope, entry));
  }

  armCountdown(countdown: NewCountdown, detail: Record<string, unknown>, options: ArmOptions = {}): Promise<ArmResult> {
    const { sessionPatch, respect = () => false, answeredSince } = options;
    return this.tx(() => {
      // A countdown carries its own directory: a session row is written only to patch it.
      if (sessionPatch) this.change(countdown, countdown.armedAt, sessionPatch);
      const answeredBy =
        answeredSince === undefined ? undefined : this.injections.firedSince(countdown.sessionId, answeredSince);
      if (answeredBy) {
        const entry = { event: "skipped", reason: "in_flight", detail: answeredDetail(answeredBy, detail) } as const;
        this.audit.write(countdown.armedAt, countdown, entry);
        return { armed: false, answeredBy };
      }
      const previous = this.countdowns.armedFor(countdown.sessionId);
      if (previous && previous.owner !== countdown.owner && respect(previous)) {
        const entry: AuditEntry = {
          event: "skipped",
          reason: "in_flight",
          detail: { stage: "idle", heldBy: previous.owner, ...detail },
        };
        this.audit.write(countdown.armedAt, countdown, entry, previous.id);
        return { armed: false, heldBy: previous };
      }
      if (previous) {
        const replaced = { event: "cancelled", reason: "superseded", detail: { replacedBy: countdown.id } } as const;
        this.end({ ...countdown, id: previous.id }, { state: "cancelled", audit: replaced }, countdown.armedAt);
      }
      this.countdowns.insert(countdown);
      const { deadlineAt, todosOpen, todosTotal, attempt } = countdown;
      const armed = { deadlineAt, todosOpen, todosTotal, attempt, ...detail };
      this.audit.write(countdown.armedAt, countdown, { event: "armed", detail: armed }, countdown.id);
      return { armed: true, superseded: previous };
    });
  }

  endCountdown(countdown: CountdownRef, end: CountdownEnd, now: number, change?: SessionChange): Promise<boolean> {
    return this.tx(() => {
      const ended = this.end(countdown, end, now);
      if (change) this.change(countdown, now, change);
      return ended;
    });
  }

  cancelArmed(scope: SessionScope, now: number, detail: Record<string, unknown>): Promise<ArmedRef | undefined> {
    return this.tx(() => {
      const armed = this.countdowns.armedFor(scope.sessionId);
      if (!armed) return undefined;
      const audit = { event: "cancelled", reason: "user_key", detail } as const;
      if (!this.end({ ...scope, id: armed.id }, { state: "cancelled", audit }, now)) return undefined;
      this.change(scope, now, { recheckAt: null });
      return armed;
    });
  }

  setStop(scope: SessionScope, source: StopSource, now: number): Promise<StopResult> {
    return this.tx(() => {
      const row = this.sessions.ensure(scope, now);
      if (row.stoppedAt != null) return { changed: false };
      this.sessions.patch(row, { stoppedAt: now, stopSource: source }, now);
      this.audit.write(now, scope, { event: "stopped", reason: source });
      const armed = this.countdowns.armedFor(scope.sessionId);
      if (armed) {
        const audit = { event: "cancelled", reason: "stopped", detail: { source } } as const;
        this.end({ ...scope, id: armed.id }, { state: "cancelled", audit }, now);
      }
      return { changed: true, cancelled: armed };
    });
  }

  resume(scope: SessionScope, source: StopSource, now: number, patch: SessionUpdate): Promise<boolean> {
    return this.tx(() => {
      const row = this.sessions.get(scope.sessionId);
      if (!row) return false;
      const stopped = row.stoppedAt != null;
      const paused = row.pausedAt != null;
      const counts =
        row.continuations +
        row.stagnantContinuations +
        row.unproductiveReplies +
        row.consecutiveFailures +
        row.errorStreak;
      if (!stopped && !paused && counts === 0) return false;
      this.sessions.patch(row, patch, now);
      this.audit.write(now, scope, {
        event: "unstopped",
        reason: source,
        detail: {
          stopped,
          paused,
          continuations: row.continuations,
          errors: row.errorStreak,
          failures: row.consecutiveFailures,
        },
      });
      return true;
    });
  }

  claimCountdown(injection: NewInjection, detail: Record<string, unknown>): Promise<boolean> {
    return this.tx(() => {
      if (!this.countdowns.claim(injection.countdownId, injection.owner, injection.createdAt)) return false;
      this.injections.insert(injection);
      const fired = { event: "fired", detail: { injectionId: injection.id, attempt: injection.attempt, ...detail } };
      this.audit.write(injection.createdAt, injection, fired as AuditEntry, injection.countdownId);
      return true;
    });
  }

  async adoptCountdowns(adoptions: Adoption[], owner: string, leaseUntil: number, now: number): Promise<boolean[]> {
    const taken: boolean[] = [];
    for (let start = 0; start < adoptions.length; start += ADOPTION_CHUNK) {
      if (start > 0) await yieldToEvents();
      const chunk = adoptions.slice(start, start + ADOPTION_CHUNK);
      await this.tx(() => {
        for (const adoption of chunk) {
          const { countdown } = adoption;
          const won = this.countdowns.takeOver(countdown.id, countdown.owner, owner, leaseUntil);
          taken.push(won);
          if (!won) continue;
          if ("end" in adoption) this.end(countdown, adoption.end, now);
          else this.audit.write(now, countdown, adoption.audit, countdown.id);
        }
      });
    }
    return taken;
  }

  renewLeases(owner: string, leaseUntil: number): Promise<number> {
    return this.now(() => this.countdowns.renew(owner, leaseUntil));
  }

  releaseLeases(owner: string, scope: Scope): Promise<number> {
    return this.now(() => this.countdowns.release(owner, scope));
  }

  /** Nothing to say: on one host a process that is gone has no pid. */
  async retire(): Promise<void> {}

  async heartbeat(): Promise<void> {}

  /** Alive unless certainly gone (same host, no such pid), and only while its lease has not run out. */
  ownerAlive(owner: string | null, leaseUntil: number | null, now: number): boolean {
    return ownerMayBeAlive(owner) && (leaseUntil ?? 0) >= now;
  }

  settleInjection<T extends Settlement>(
    injection: InjectionRef,
    status: "sent" | "failed" | "unknown",
    now: number,
    error: string | null,
    settle: (row: SessionRow) => T,
  ): Promise<T | undefined> {
    return this.tx(() =>
      this.injections.finish(injection.id, status, error, now) ? this.settle(injection, now, settle) : undefined,
    );
  }

  confirmUncertain<T extends Settlement>(
    injection: InjectionRef,
    now: number,
    settle: (row: SessionRow) => T,
  ): Promise<T | undefined> {
    return this.tx(() =>
      this.injections.confirm(injection.id, now) ? this.settle(injection, now, settle) : undefined,
    );
  }

  // ── upkeep ──────────────────────────────────────────────────────────────────

  /** A committed header write, never waiting for a lock: it fails on a read-only, full, locked or damaged file. */
  probe(): Promise<void> {
    return this.now(() => {
      const { raw } = this.connection;
      raw.exec("PRAGMA busy_timeout = 0");
      try {
        const version = raw.all<{ user_version: number }>("PRAGMA user_version")[0]?.user_version ?? 0;
        raw.exec(`PRAGMA user_version = ${(version + 1) % 1_000_000}`);
      } finally {
        raw.exec(`PRAGMA busy_timeout = ${Math.trunc(this.options.busyTimeoutMs ?? 5000)}`);
      }
      if (this.replaced()) throw new Error("the file at the configured path is not the one that was opened");
    });
  }

  problemOf(error: unknown): StoreProblem | undefined {
    return sqliteProblemOf(error);
  }

  replaced(): boolean {
    return this.identity !== undefined && fileIdentity(this.location) !== this.identity;
  }

  prune(cutoff: number): Promise<PruneReport> {
    return prune(this.connection.raw, { cutoff });
  }

  async close(): Promise<void> {
    this.connection.close();
  }
}
