// The store port over PostgreSQL. Where SQLite serializes every writer with BEGIN IMMEDIATE, here a state change
// takes a transaction-scoped advisory lock on its session (no row needs to exist for it), so that changes to one
// session serialize across processes and hosts while other sessions go on in parallel; a statement that changes a
// countdown or an injection still names the state it expects, so of two writers only one changes it. Liveness of an
// owner is its replica's heartbeat judged by the database's clock, and the claim is fenced by it.
import { and, asc, desc, eq, gte, inArray, isNotNull, lte, sql } from "drizzle-orm";
import type { AuditEntry, StopSource } from "../../core/reasons.js";
import type {
  Adoption,
  ArmOptions,
  ArmResult,
  ArmedRef,
  ContinuationRef,
  CountdownEnd,
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
import type { PruneReport } from "../sqlite/retention.js";
import { ownerMayBeAlive } from "../owner.js";
import { PATCHABLE } from "../session-columns.js";
import { pgReader, type SqlReader } from "../reader.js";
import { hostname } from "node:os";
import type { PgConnection, PgDb } from "./open.js";
import { pgProblemOf } from "./problems.js";
import { DB_NOW_MS, whole } from "./rows.js";
import { auditEvents, countdowns, injections, replicas, sessions } from "./schema.js";
import { prunePg } from "./retention.js";
import {
  lockSession,
  armedCountdownOf,
  continuationSince,
  endArmedCountdown,
  insertArmedCountdown,
  insertAudit,
} from "./statements.js";
import { answeredDetail } from "../audit-detail.js";

const ADOPTION_CHUNK = 500;
/** What no row of each table can lack (see `whole`). */
const SESSION = ["sessionId", "directory", "createdAt", "updatedAt"] as const;
const COUNTDOWN = ["id", "sessionId", "directory", "armedAt", "deadlineAt", "state"] as const;
const INJECTION = ["id", "sessionId", "countdownId", "directory", "createdAt", "status"] as const;
const dbNow = sql.raw(DB_NOW_MS);

type Tx = PgDb;

/** The rows of a scope: its directory on its server (NULL, a machine's own, matches NULL). */
function inScope(table: typeof countdowns | typeof injections | typeof sessions, scope: Scope) {
  return and(eq(table.directory, scope.directory), sql`${table.server} IS NOT DISTINCT FROM ${scope.server ?? null}`);
}
type Writer = PgDb | Tx;

export interface PgStoreOptions {
  /** `plugin` or `service`: what the replica row says it is. */
  kind?: string;
  version?: string;
}

export class PgStore implements EngineStore {
  readonly location: string;
  private readonly db: PgDb;
  /** Owners whose heartbeat was fresh at the last look (refreshed by every heartbeat). */
  private liveOwners = new Set<string>();
  private readonly startedAt = Date.now();
  /** Raw SQL for operators (CLI, TUI panel). */
  readonly reader: SqlReader;

  constructor(
    readonly connection: PgConnection,
    private readonly options: PgStoreOptions = {},
  ) {
    this.location = connection.location;
    this.db = connection.db;
    this.reader = pgReader(connection);
  }

  /** `work` in one transaction holding the session's lock. */
  private locked<T>(sessionId: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.connection.transaction(async (tx) => {
      await lockSession(tx, sessionId);
      return work(tx);
    });
  }

  // ── reads ───────────────────────────────────────────────────────────────────

  async session(sessionId: string): Promise<SessionRow | undefined> {
    return this.readSession(this.db, sessionId);
  }

  async countdown(id: string): Promise<CountdownRow | undefined> {
    return whole(await this.db.select().from(countdowns).where(eq(countdowns.id, id)).limit(1), COUNTDOWN)[0];
  }

  async injection(id: string): Promise<InjectionRow | undefined> {
    return whole(await this.db.select().from(injections).where(eq(injections.id, id)).limit(1), INJECTION)[0];
  }

  async hasPendingInjection(sessionId: string): Promise<boolean> {
    const rows = await this.db
      .select({ id: injections.id })
      .from(injections)
      .where(and(eq(injections.sessionId, sessionId), eq(injections.status, "pending")))
      .limit(1);
    return whole(rows, ["id"]).length > 0;
  }

  continuedSince(sessionId: string, since: number): Promise<ContinuationRef | undefined> {
    return continuationSince(this.db, sessionId, since);
  }

  async userCancelledSince(sessionId: string, since: number): Promise<number | undefined> {
    const rows = await this.db
      .select({ at: auditEvents.at })
      .from(auditEvents)
      .where(
        and(
          eq(auditEvents.sessionId, sessionId),
          gte(auditEvents.at, since),
          eq(auditEvents.event, "cancelled"),
          eq(auditEvents.reason, "user_key"),
        ),
      )
      .orderBy(desc(auditEvents.at))
      .limit(1);
    return whole(rows, ["at"])[0]?.at;
  }

  async armedCountdowns(scope: Scope): Promise<CountdownRow[]> {
    const rows = await this.db
      .select()
      .from(countdowns)
      .where(and(eq(countdowns.state, "armed"), inScope(countdowns, scope)))
      .orderBy(asc(countdowns.deadlineAt));
    return whole(rows, COUNTDOWN);
  }

  async pendingInjections(scope: Scope): Promise<InjectionRow[]> {
    const rows = await this.db
      .select()
      .from(injections)
      .where(and(eq(injections.status, "pending"), inScope(injections, scope)))
      .orderBy(asc(injections.createdAt));
    return whole(rows, INJECTION);
  }

  async uncertainInjections(sessionId: string, since: number): Promise<InjectionRow[]> {
    const rows = await this.db
      .select()
      .from(injections)
      .where(
        and(
          eq(injections.sessionId, sessionId),
          gte(injections.createdAt, since),
          inArray(injections.status, ["failed", "unknown"]),
        ),
      )
      .orderBy(desc(injections.createdAt))
      .limit(10);
    return whole(rows, INJECTION);
  }

  async sessionsToRecheck(scope: Scope, dueBy: number) {
    // Awaited here: drizzle's query builders are thenables that run again at every then(); the port hands out promises.
    const rows = await this.db
      .select({ sessionId: sessions.sessionId, recheckAt: sessions.recheckAt })
      .from(sessions)
      .where(and(inScope(sessions, scope), isNotNull(sessions.recheckAt), lte(sessions.recheckAt, dueBy)));
    return whole(rows, ["sessionId", "recheckAt"]);
  }

  // ── the builders ────────────────────────────────────────────────────────────

  private async ensure(tx: Tx, scope: SessionScope, now: number): Promise<SessionRow> {
    const existing = await this.readSession(tx, scope.sessionId);
    if (existing) return existing;
    await tx
      .insert(sessions)
      .values({
        sessionId: scope.sessionId,
        directory: scope.directory,
        server: scope.server ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing();
    return (await this.readSession(tx, scope.sessionId))!;
  }

  private async readSession(tx: Writer, sessionId: string): Promise<SessionRow | undefined> {
    return whole(await tx.select().from(sessions).where(eq(sessions.sessionId, sessionId)).limit(1), SESSION)[0];
  }

  private async patch(tx: Tx, row: SessionRow, update: SessionUpdate, now: number): Promise<SessionRow> {
    const next = { ...row, ...update, updatedAt: now } as SessionRow;
    const values: Record<string, unknown> = { updatedAt: now };
    for (const key of PATCHABLE) values[key] = next[key] ?? null;
    await tx.update(sessions).set(values).where(eq(sessions.sessionId, row.sessionId));
    return next;
  }

  private async change(tx: Tx, scope: SessionScope, now: number, change: SessionChange): Promise<SessionRow> {
    const row = await this.ensure(tx, scope, now);
    return this.patch(tx, row, typeof change === "function" ? change(row) : change, now);
  }

  private async settle<T extends Settlement>(
    tx: Tx,
    scope: SessionScope,
    now: number,
    settle: (row: SessionRow) => T,
  ): Promise<T> {
    const row = await this.ensure(tx, scope, now);
    const outcome = settle(row);
    if (outcome.patch) await this.patch(tx, row, outcome.patch, now);
    for (const entry of outcome.audit) await insertAudit(tx, now, scope, entry);
    return outcome;
  }

  // ── state changes ───────────────────────────────────────────────────────────

  changeSession(scope: SessionScope, now: number, change: SessionChange, audit: AuditEntry[] = []) {
    return this.locked(scope.sessionId, async (tx) => {
      const row = await this.change(tx, scope, now, change);
      for (const entry of audit) await insertAudit(tx, now, scope, entry);
      return row;
    });
  }

  settleSession<T extends Settlement>(scope: SessionScope, now: number, settle: (row: SessionRow) => T): Promise<T> {
    return this.locked(scope.sessionId, (tx) => this.settle(tx, scope, now, settle));
  }

  recordDecision(scope: SessionScope, now: number, entry: AuditEntry): Promise<void> {
    return insertAudit(this.db, now, scope, entry);
  }

  armCountdown(countdown: NewCountdown, detail: Record<string, unknown>, options: ArmOptions = {}): Promise<ArmResult> {
    const { sessionPatch, respect = () => false, answeredSince } = options;
    return this.locked(countdown.sessionId, async (tx) => {
      if (sessionPatch) await this.change(tx, countdown, countdown.armedAt, sessionPatch);
      // Under the session's lock, which a firing takes too: a continuation fired before this is seen here.
      const answeredBy =
        answeredSince === undefined ? undefined : await continuationSince(tx, countdown.sessionId, answeredSince);
      if (answeredBy) {
        const entry = { event: "skipped", reason: "in_flight", detail: answeredDetail(answeredBy, detail) } as const;
        await insertAudit(tx, countdown.armedAt, countdown, entry);
        return { armed: false, answeredBy };
      }
      const previous = await armedCountdownOf(tx, countdown.sessionId);
      // Whether its owner is alive is read here, in the transaction, from its heartbeat: the cached view of the
      // replicas is a tick old, and a replica that started meanwhile would look dead and lose its countdown.
      if (
        previous &&
        previous.owner !== countdown.owner &&
        (await this.heartbeatFresh(tx, previous.owner)) &&
        respect(previous)
      ) {
        const entry: AuditEntry = {
          event: "skipped",
          reason: "in_flight",
          detail: { stage: "idle", heldBy: previous.owner, ...detail },
        };
        await insertAudit(tx, countdown.armedAt, countdown, entry, previous.id);
        return { armed: false, heldBy: previous };
      }
      if (previous) {
        const replaced = { event: "cancelled", reason: "superseded", detail: { replacedBy: countdown.id } } as const;
        await endArmedCountdown(
          tx,
          { ...countdown, id: previous.id },
          { state: "cancelled", audit: replaced },
          countdown.armedAt,
        );
      }
      const { deadlineAt, todosOpen, todosTotal, attempt } = countdown;
      const armed = { deadlineAt, todosOpen, todosTotal, attempt, ...detail };
      await insertArmedCountdown(tx, countdown, { event: "armed", detail: armed });
      return { armed: true, superseded: previous };
    });
  }

  endCountdown(countdown: CountdownRef, end: CountdownEnd, now: number, change?: SessionChange): Promise<boolean> {
    return this.locked(countdown.sessionId, async (tx) => {
      const ended = await endArmedCountdown(tx, countdown, end, now);
      if (change) await this.change(tx, countdown, now, change);
      return ended;
    });
  }

  cancelArmed(scope: SessionScope, now: number, detail: Record<string, unknown>): Promise<ArmedRef | undefined> {
    return this.locked(scope.sessionId, async (tx) => {
      const armed = await armedCountdownOf(tx, scope.sessionId);
      if (!armed) return undefined;
      const audit = { event: "cancelled", reason: "user_key", detail } as const;
      if (!(await endArmedCountdown(tx, { ...scope, id: armed.id }, { state: "cancelled", audit }, now)))
        return undefined;
      await this.change(tx, scope, now, { recheckAt: null });
      return armed;
    });
  }

  setStop(scope: SessionScope, source: StopSource, now: number): Promise<StopResult> {
    return this.locked(scope.sessionId, async (tx) => {
      const row = await this.ensure(tx, scope, now);
      if (row.stoppedAt != null) return { changed: false };
      await this.patch(tx, row, { stoppedAt: now, stopSource: source }, now);
      await insertAudit(tx, now, scope, { event: "stopped", reason: source });
      const armed = await armedCountdownOf(tx, scope.sessionId);
      if (armed) {
        const audit = { event: "cancelled", reason: "stopped", detail: { source } } as const;
        await endArmedCountdown(tx, { ...scope, id: armed.id }, { state: "cancelled", audit }, now);
      }
      return { changed: true, cancelled: armed };
    });
  }

  resume(scope: SessionScope, source: StopSource, now: number, patch: SessionUpdate): Promise<boolean> {
    return this.locked(scope.sessionId, async (tx) => {
      const row = await this.readSession(tx, scope.sessionId);
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
      await this.patch(tx, row, patch, now);
      await insertAudit(tx, now, scope, {
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
    return this.locked(injection.sessionId, async (tx) => {
      // Fenced: only an owner whose heartbeat the database still counts as fresh may fire. A process that was
      // paused or cut off past its lease may have been replaced; its countdowns are then someone else's to fire.
      const claimed = await tx
        .update(countdowns)
        .set({ state: "fired", endedAt: injection.createdAt, endReason: null, leaseUntil: null })
        .where(
          and(
            eq(countdowns.id, injection.countdownId),
            eq(countdowns.state, "armed"),
            eq(countdowns.owner, injection.owner),
            sql`EXISTS (SELECT 1 FROM ${replicas} WHERE ${replicas.id} = ${injection.owner}
              AND ${replicas.heartbeatAt} + ${replicas.leaseMs} >= ${dbNow})`,
          ),
        )
        .returning({ id: countdowns.id })
        .then((rows) => whole(rows, ["id"]));
      if (claimed.length === 0) return false;
      await tx.insert(injections).values({
        onSent: null,
        ...injection,
        server: injection.server ?? null,
        status: "pending",
        updatedAt: injection.createdAt,
      });
      const fired = { event: "fired", detail: { injectionId: injection.id, attempt: injection.attempt, ...detail } };
      await insertAudit(tx, injection.createdAt, injection, fired as AuditEntry, injection.countdownId);
      return true;
    });
  }

  async adoptCountdowns(adoptions: Adoption[], owner: string, leaseUntil: number, now: number): Promise<boolean[]> {
    const taken: boolean[] = [];
    for (let start = 0; start < adoptions.length; start += ADOPTION_CHUNK) {
      const chunk = adoptions.slice(start, start + ADOPTION_CHUNK);
      const won = await this.connection.transaction(async (tx) => {
        // Rows another replica is adopting right now are skipped, not waited for: it will take them.
        const free = await tx
          .select({ id: countdowns.id, owner: countdowns.owner })
          .from(countdowns)
          .where(
            and(
              inArray(
                countdowns.id,
                chunk.map((a) => a.countdown.id),
              ),
              eq(countdowns.state, "armed"),
            ),
          )
          .for("update", { skipLocked: true });
        const current = new Map(whole(free, ["id"]).map((row) => [row.id, row.owner]));
        const results: boolean[] = [];
        for (const adoption of chunk) {
          const { countdown } = adoption;
          const ok = current.has(countdown.id) && current.get(countdown.id) === countdown.owner;
          results.push(ok);
          if (!ok) continue;
          await tx.update(countdowns).set({ owner, leaseUntil }).where(eq(countdowns.id, countdown.id));
          if ("end" in adoption) await endArmedCountdown(tx, countdown, adoption.end, now);
          else await insertAudit(tx, now, countdown, adoption.audit, countdown.id);
        }
        return results;
      });
      taken.push(...won);
    }
    return taken;
  }

  async renewLeases(owner: string, leaseUntil: number): Promise<number> {
    const renewed = await this.db
      .update(countdowns)
      .set({ leaseUntil })
      .where(and(eq(countdowns.owner, owner), eq(countdowns.state, "armed")))
      .returning({ id: countdowns.id })
      .then((rows) => whole(rows, ["id"]));
    return renewed.length;
  }

  async releaseLeases(owner: string, scope: Scope): Promise<number> {
    const released = await this.db
      .update(countdowns)
      .set({ owner: null, leaseUntil: null })
      .where(and(eq(countdowns.owner, owner), eq(countdowns.state, "armed"), inScope(countdowns, scope)))
      .returning({ id: countdowns.id })
      .then((rows) => whole(rows, ["id"]));
    return released.length;
  }

  /** Gone at once rather than after a lease: others need not wait to adopt what this owner held. */
  async retire(owner: string): Promise<void> {
    await this.db.delete(replicas).where(eq(replicas.id, owner));
    this.liveOwners.delete(owner);
  }

  settleInjection<T extends Settlement>(
    injection: InjectionRef,
    status: "sent" | "failed" | "unknown",
    now: number,
    error: string | null,
    settle: (row: SessionRow) => T,
  ): Promise<T | undefined> {
    return this.locked(injection.sessionId, async (tx) => {
      const finished = await tx
        .update(injections)
        .set({ status, error, updatedAt: now, leaseUntil: null })
        .where(and(eq(injections.id, injection.id), eq(injections.status, "pending")))
        .returning({ id: injections.id })
        .then((rows) => whole(rows, ["id"]));
      return finished.length > 0 ? this.settle(tx, injection, now, settle) : undefined;
    });
  }

  confirmUncertain<T extends Settlement>(
    injection: InjectionRef,
    now: number,
    settle: (row: SessionRow) => T,
  ): Promise<T | undefined> {
    return this.locked(injection.sessionId, async (tx) => {
      const confirmed = await tx
        .update(injections)
        .set({ status: "sent", updatedAt: now, leaseUntil: null })
        .where(and(eq(injections.id, injection.id), inArray(injections.status, ["failed", "unknown"])))
        .returning({ id: injections.id })
        .then((rows) => whole(rows, ["id"]));
      return confirmed.length > 0 ? this.settle(tx, injection, now, settle) : undefined;
    });
  }

  // ── leases across hosts ─────────────────────────────────────────────────────

  /** Whether `owner` has a heartbeat younger than its lease by the database's clock, now (and the set remembers it). */
  private async heartbeatFresh(tx: Writer, owner: string | null): Promise<boolean> {
    if (owner === null) return false;
    const rows = await tx
      .select({ id: replicas.id })
      .from(replicas)
      .where(and(eq(replicas.id, owner), sql`${replicas.heartbeatAt} + ${replicas.leaseMs} >= ${dbNow}`))
      .then((found) => whole(found, ["id"]));
    if (rows.length > 0) this.liveOwners.add(owner);
    else this.liveOwners.delete(owner);
    return rows.length > 0 && ownerMayBeAlive(owner);
  }

  /**
   * Writes this owner's heartbeat (the database's clock) and reads which owners are alive now, on the connection
   * kept for it (a burst of state changes queued for the pool does not delay it past the lease).
   */
  async heartbeat(owner: string, leaseMs: number): Promise<void> {
    const [host, pidText] = owner.split("/");
    await this.connection.liveness
      .insert(replicas)
      .values({
        id: owner,
        kind: this.options.kind ?? "plugin",
        host: host ?? hostname(),
        pid: Number(pidText) || process.pid,
        startedAt: this.startedAt,
        heartbeatAt: sql`${dbNow}`,
        leaseMs: Math.trunc(leaseMs),
        version: this.options.version ?? null,
      })
      .onConflictDoUpdate({ target: replicas.id, set: { heartbeatAt: sql`${dbNow}`, leaseMs: Math.trunc(leaseMs) } });
    const alive = await this.connection.liveness
      .select({ id: replicas.id })
      .from(replicas)
      .where(sql`${replicas.heartbeatAt} + ${replicas.leaseMs} >= ${dbNow}`);
    this.liveOwners = new Set(whole(alive, ["id"]).map((row) => row.id));
  }

  /**
   * Alive: a heartbeat fresh by the database's clock at the last look, unless the owner certainly is gone (a pid of
   * this very host that no longer exists: a process restarted after a crash need not wait out its own old lease).
   * Another host's pid or clock says nothing.
   */
  ownerAlive(owner: string | null, _leaseUntil?: number | null, _now?: number): boolean {
    return owner !== null && this.liveOwners.has(owner) && ownerMayBeAlive(owner);
  }

  // ── upkeep ──────────────────────────────────────────────────────────────────

  /** A committed write (refused on a read-only server), bounded by the statement timeout. */
  async probe(): Promise<void> {
    await this.connection.ensureMigrated();
    await this.connection.transaction(async (tx) => {
      await tx.execute(sql`UPDATE ${replicas} SET heartbeat_at = heartbeat_at WHERE id = ''`);
    });
  }

  problemOf(error: unknown): StoreProblem | undefined {
    return pgProblemOf(error);
  }

  replaced(): boolean {
    return false;
  }

  prune(cutoff: number): Promise<PruneReport> {
    return prunePg(this.db, { cutoff });
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
