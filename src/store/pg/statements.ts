// The statements of store/statements.ts on PostgreSQL, written out in SQL and, under node-postgres, prepared once per
// connection (the driver parses each name once, then only binds). Measured on this project's 2-core machine:
// drizzle's query builder spent 100–200 µs of CPU building each insert, and PostgreSQL ~100 µs parsing and planning
// each unnamed statement, together more than running them. A countdown's row and its audit row are one statement (a
// data-modifying WITH). Liveness is a heartbeat by the database's clock, never a host's.
import { getTableColumns } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { AuditValues } from "../audit-row.js";
import { ownerMayBeAlive } from "../owner.js";
import type { CountdownRow, InjectionRow, SessionRow } from "../schema.js";
import { PATCHABLE } from "../session-columns.js";
import type { AsyncStatements, HistoryTable } from "../statements.js";
import type { ArmedRef, ContinuationRef, NewCountdown, NewInjection, Scope, SessionScope } from "../types.js";
import type { PgDb } from "./connection.js";
import { exec, statement, type Statement } from "./prepared.js";
import { DB_NOW_MS, whole } from "./rows.js";
import { countdowns, injections, sessions } from "./schema.js";

/** A table's columns as the rows' keys, epoch milliseconds as float8 (both drivers give int8 back as text). */
function selectList(table: PgTable): string {
  return Object.entries(getTableColumns(table) as Record<string, PgColumn>)
    .map(([key, column]) => `${column.name}${column.columnType === "PgBigInt53" ? "::float8" : ""} AS "${key}"`)
    .join(", ");
}

const columnOf = (key: string) => (getTableColumns(sessions) as Record<string, PgColumn>)[key]!.name;
const DB_NOW = DB_NOW_MS;
const AUDIT = "audit_events (at, session_id, directory, server, event, reason, detail)";
/** One audit row's values, typed: in `INSERT … SELECT` PostgreSQL would take an untyped parameter for text. */
const auditValues = (n: number) =>
  `$${n}::bigint, $${n + 1}::text, $${n + 2}::text, $${n + 3}::text, $${n + 4}::text, $${n + 5}::text, $${n + 6}::text`;
const auditParams = (a: AuditValues) => [a.at, a.sessionId, a.directory, a.server, a.event, a.reason, a.detail];
const FRESH = `heartbeat_at + lease_ms >= ${DB_NOW}`;

const SESSION = ["sessionId", "directory", "createdAt", "updatedAt"] as const;
const COUNTDOWN = ["id", "sessionId", "directory", "armedAt", "deadlineAt", "state"] as const;
const INJECTION = ["id", "sessionId", "countdownId", "directory", "createdAt", "status"] as const;

const S = {
  session: statement("session", `SELECT ${selectList(sessions)} FROM sessions WHERE session_id = $1 LIMIT 1`),
  insertSession: statement(
    "insert_session",
    `INSERT INTO sessions (session_id, directory, server, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
     ON CONFLICT DO NOTHING`,
  ),
  writeSession: statement(
    "write_session",
    `UPDATE sessions SET ${PATCHABLE.map((key, i) => `${columnOf(key)} = $${i + 2}`).join(", ")},
       updated_at = $${PATCHABLE.length + 2} WHERE session_id = $1`,
  ),
  toRecheck: statement(
    "to_recheck",
    `SELECT session_id AS "sessionId", recheck_at::float8 AS "recheckAt", owed_since::float8 AS "owedSince" FROM sessions
     WHERE directory = $1 AND server IS NOT DISTINCT FROM $2 AND recheck_at IS NOT NULL AND recheck_at <= $3`,
  ),
  audit: statement("audit", `INSERT INTO ${AUDIT} VALUES (${auditValues(1)})`),
  // Since a look began, by the database's clock ($2: how long ago it began, by the reader's). A row written before
  // db_at existed has only its writer's time.
  userCancel: statement(
    "user_cancel",
    `SELECT at::float8 AS at FROM audit_events
     WHERE session_id = $1 AND coalesce(db_at, at) >= ${DB_NOW} - $2::bigint AND event = 'cancelled'
       AND reason = 'user_key'
     ORDER BY id DESC LIMIT 1`,
  ),
  countdown: statement("countdown", `SELECT ${selectList(countdowns)} FROM countdowns WHERE id = $1 LIMIT 1`),
  armedFor: statement(
    "armed_for",
    `SELECT id, owner, lease_until::float8 AS "leaseUntil" FROM countdowns
     WHERE session_id = $1 AND state = 'armed' LIMIT 1`,
  ),
  armedIn: statement(
    "armed_in",
    `SELECT ${selectList(countdowns)} FROM countdowns
     WHERE state = 'armed' AND directory = $1 AND server IS NOT DISTINCT FROM $2 ORDER BY deadline_at`,
  ),
  fresh: statement("fresh", `SELECT 1 AS fresh FROM replicas WHERE id = $1 AND ${FRESH}`),
  insertCountdown: statement(
    "insert_countdown",
    `WITH armed AS (
       INSERT INTO countdowns (id, session_id, directory, server, armed_at, deadline_at, state, owner, lease_until,
                               attempt, todos_open, todos_total)
       VALUES ($1, $2, $3, $4, $5, $6, 'armed', $7, $8, $9, $10, $11)
       RETURNING id)
     INSERT INTO ${AUDIT} SELECT ${auditValues(12)} FROM armed`,
  ),
  endCountdown: statement(
    "end_countdown",
    `WITH ended AS (
       UPDATE countdowns SET state = $2, ended_at = $4, end_reason = $3, lease_until = NULL
       WHERE id = $1 AND state = 'armed'
       RETURNING id)
     INSERT INTO ${AUDIT} SELECT ${auditValues(5)} FROM ended RETURNING id`,
  ),
  // Fenced: only an owner whose heartbeat the database still counts as fresh may fire.
  claim: statement(
    "claim",
    `UPDATE countdowns SET state = 'fired', ended_at = $3, end_reason = NULL, lease_until = NULL
     WHERE id = $1 AND state = 'armed' AND owner = $2
       AND EXISTS (SELECT 1 FROM replicas WHERE replicas.id = $2 AND ${FRESH})
     RETURNING id`,
  ),
  // Rows another replica is taking over right now are skipped, not waited for: it will take them.
  takeOver: statement(
    "take_over",
    `WITH free AS (
       SELECT id FROM countdowns WHERE id = $1 AND state = 'armed' AND owner IS NOT DISTINCT FROM $2
       FOR UPDATE SKIP LOCKED)
     UPDATE countdowns SET owner = $3, lease_until = $4 FROM free WHERE countdowns.id = free.id RETURNING countdowns.id`,
  ),
  renew: statement(
    "renew",
    `WITH renewed AS (UPDATE countdowns SET lease_until = $2 WHERE owner = $1 AND state = 'armed' RETURNING 1)
     SELECT count(*)::int AS n FROM renewed`,
  ),
  release: statement(
    "release",
    `WITH released AS (
       UPDATE countdowns SET owner = NULL, lease_until = NULL
       WHERE owner = $1 AND state = 'armed' AND directory = $2 AND server IS NOT DISTINCT FROM $3 RETURNING 1)
     SELECT count(*)::int AS n FROM released`,
  ),
  injection: statement("injection", `SELECT ${selectList(injections)} FROM injections WHERE id = $1 LIMIT 1`),
  insertInjection: statement(
    "insert_injection",
    `INSERT INTO injections (id, session_id, countdown_id, directory, server, message_id, created_at, status, agent,
                             model, variant, todos_total, todos_open, attempt, on_sent, owner, lease_until, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $10, $11, $12, $13, $14, $15, $16, $7)`,
  ),
  finish: statement(
    "finish",
    `UPDATE injections SET status = $2, error = $3, updated_at = $4, lease_until = NULL
     WHERE id = $1 AND status = 'pending' RETURNING id`,
  ),
  confirm: statement(
    "confirm",
    `UPDATE injections SET status = 'sent', updated_at = $2, lease_until = NULL
     WHERE id = $1 AND status IN ('failed', 'unknown') RETURNING id`,
  ),
  tuiWatching: statement(
    "tui_watching",
    `SELECT id FROM replicas WHERE kind = 'tui' AND directory = $1 AND ${FRESH} LIMIT 1`,
  ),
  pendingOf: statement("pending_of", `SELECT id FROM injections WHERE session_id = $1 AND status = 'pending' LIMIT 1`),
  // The session's few rows (injections_session_idx), those fired since a look began by the database's clock, as
  // userCancel.
  continuedSince: statement(
    "continued_since",
    `SELECT id AS "injectionId", created_at::float8 AS "firedAt" FROM injections
     WHERE session_id = $1 AND coalesce(db_created_at, created_at) >= ${DB_NOW} - $2::bigint
       AND status IN ('pending', 'sent', 'unknown')
     ORDER BY coalesce(db_created_at, created_at) DESC LIMIT 1`,
  ),
  pendingIn: statement(
    "pending_in",
    `SELECT ${selectList(injections)} FROM injections
     WHERE status = 'pending' AND directory = $1 AND server IS NOT DISTINCT FROM $2 ORDER BY created_at`,
  ),
  uncertainIn: statement(
    "uncertain_in",
    `SELECT ${selectList(injections)} FROM injections
     WHERE session_id = $1 AND created_at >= $2 AND status IN ('failed', 'unknown') ORDER BY created_at DESC LIMIT 10`,
  ),
};

/** The key retention deletes by, table by table. */
const KEY: Record<HistoryTable, string> = {
  audit_events: "id",
  injections: "id",
  countdowns: "id",
  sessions: "session_id",
};

const scoped = (scope: Scope) => [scope.directory, scope.server ?? null];
/** How long ago `since` was, by the clock both were read from: a span means the same on every host. */
const ago = (since: number, now: number) => Math.max(0, Math.round(now - since));

export class PgStatements implements AsyncStatements {
  constructor(
    private readonly db: PgDb,
    /** Owners whose heartbeat was fresh at the last look: a look in a transaction refreshes it. */
    private readonly liveOwners: Set<string>,
  ) {}

  private run<T>(s: Statement, values: readonly unknown[]): Promise<T[]> {
    return exec<T>(this.db, s, values);
  }

  async session(sessionId: string): Promise<SessionRow | undefined> {
    return whole(await this.run<SessionRow>(S.session, [sessionId]), SESSION)[0];
  }

  async insertSession(scope: SessionScope, now: number): Promise<void> {
    await this.run(S.insertSession, [scope.sessionId, scope.directory, scope.server ?? null, now]);
  }

  async writeSession(row: SessionRow): Promise<void> {
    await this.run(S.writeSession, [row.sessionId, ...PATCHABLE.map((key) => row[key] ?? null), row.updatedAt]);
  }

  async sessionsToRecheck(scope: Scope, dueBy: number) {
    const rows = await this.run<{ sessionId: string; recheckAt: number | null; owedSince: number | null }>(
      S.toRecheck,
      [...scoped(scope), dueBy],
    );
    return whole(rows, ["sessionId", "recheckAt"]);
  }

  async audit(row: AuditValues): Promise<void> {
    await this.run(S.audit, auditParams(row));
  }

  async auditMany(rows: AuditValues[]): Promise<void> {
    for (const row of rows) await this.run(S.audit, auditParams(row));
  }

  async userCancelledSince(sessionId: string, since: number, now: number): Promise<number | undefined> {
    return whole(await this.run<{ at: number }>(S.userCancel, [sessionId, ago(since, now)]), ["at"])[0]?.at;
  }

  async countdown(id: string): Promise<CountdownRow | undefined> {
    return whole(await this.run<CountdownRow>(S.countdown, [id]), COUNTDOWN)[0];
  }

  async armedFor(sessionId: string): Promise<ArmedRef | undefined> {
    return whole(await this.run<ArmedRef>(S.armedFor, [sessionId]), ["id"])[0];
  }

  async armedIn(scope: Scope): Promise<CountdownRow[]> {
    return whole(await this.run<CountdownRow>(S.armedIn, scoped(scope)), COUNTDOWN);
  }

  /**
   * Read now, from its heartbeat: the cached view of the replicas is a tick old, and a replica that started meanwhile
   * would look dead and lose its countdown. A pid of this very host that is gone is gone whatever its heartbeat says.
   */
  async ownerAlive(owner: string | null): Promise<boolean> {
    if (owner === null) return false;
    const fresh = whole(await this.run<{ fresh: number }>(S.fresh, [owner]), ["fresh"]).length > 0;
    if (fresh) this.liveOwners.add(owner);
    else this.liveOwners.delete(owner);
    return fresh && ownerMayBeAlive(owner);
  }

  async insertCountdown(c: NewCountdown, armed: AuditValues): Promise<void> {
    await this.run(S.insertCountdown, [
      c.id,
      c.sessionId,
      c.directory,
      c.server ?? null,
      c.armedAt,
      c.deadlineAt,
      c.owner,
      c.leaseUntil,
      c.attempt,
      c.todosOpen,
      c.todosTotal,
      ...auditParams(armed),
    ]);
  }

  async endCountdown(
    id: string,
    state: "cancelled" | "expired",
    reason: string,
    now: number,
    audit: AuditValues,
  ): Promise<boolean> {
    const rows = await this.run<{ id: unknown }>(S.endCountdown, [id, state, reason, now, ...auditParams(audit)]);
    return whole(rows, ["id"]).length > 0;
  }

  async claimCountdown(id: string, owner: string, now: number): Promise<boolean> {
    return whole(await this.run<{ id: string }>(S.claim, [id, owner, now]), ["id"]).length > 0;
  }

  async takeOver(
    candidates: ReadonlyArray<{ id: string; owner: string | null }>,
    owner: string,
    leaseUntil: number,
  ): Promise<string[]> {
    const taken: string[] = [];
    for (const candidate of candidates) {
      const rows = await this.run<{ id: string }>(S.takeOver, [candidate.id, candidate.owner, owner, leaseUntil]);
      if (whole(rows, ["id"]).length > 0) taken.push(candidate.id);
    }
    return taken;
  }

  async renewLeases(owner: string, leaseUntil: number): Promise<number> {
    return Number(whole(await this.run<{ n: number }>(S.renew, [owner, leaseUntil]), ["n"])[0]?.n ?? 0);
  }

  async releaseLeases(owner: string, scope: Scope): Promise<number> {
    return Number(whole(await this.run<{ n: number }>(S.release, [owner, ...scoped(scope)]), ["n"])[0]?.n ?? 0);
  }

  async injection(id: string): Promise<InjectionRow | undefined> {
    return whole(await this.run<InjectionRow>(S.injection, [id]), INJECTION)[0];
  }

  async insertInjection(i: NewInjection): Promise<void> {
    await this.run(S.insertInjection, [
      i.id,
      i.sessionId,
      i.countdownId,
      i.directory,
      i.server ?? null,
      i.messageId,
      i.createdAt,
      i.agent,
      i.model,
      i.variant,
      i.todosTotal,
      i.todosOpen,
      i.attempt,
      i.onSent ?? null,
      i.owner,
      i.leaseUntil,
    ]);
  }

  async finishInjection(
    id: string,
    status: "sent" | "failed" | "unknown",
    error: string | null,
    now: number,
  ): Promise<boolean> {
    return whole(await this.run<{ id: string }>(S.finish, [id, status, error, now]), ["id"]).length > 0;
  }

  async confirmInjection(id: string, now: number): Promise<boolean> {
    return whole(await this.run<{ id: string }>(S.confirm, [id, now]), ["id"]).length > 0;
  }

  async hasPendingInjection(sessionId: string): Promise<boolean> {
    return whole(await this.run<{ id: string }>(S.pendingOf, [sessionId]), ["id"]).length > 0;
  }

  /** Fresh by the database's clock: `now` (this process's) says nothing across hosts. */
  async tuiWatching(directory: string): Promise<boolean> {
    return whole(await this.run<{ id: string }>(S.tuiWatching, [directory]), ["id"]).length > 0;
  }

  async continuedSince(sessionId: string, since: number, now: number): Promise<ContinuationRef | undefined> {
    const rows = await this.run<ContinuationRef>(S.continuedSince, [sessionId, ago(since, now)]);
    return whole(rows, ["injectionId", "firedAt"])[0];
  }

  async pendingIn(scope: Scope): Promise<InjectionRow[]> {
    return whole(await this.run<InjectionRow>(S.pendingIn, scoped(scope)), INJECTION);
  }

  async uncertainIn(sessionId: string, since: number): Promise<InjectionRow[]> {
    return whole(await this.run<InjectionRow>(S.uncertainIn, [sessionId, since]), INJECTION);
  }

  /** Rows other transactions have locked are skipped rather than waited for (they are not history yet). */
  async deleteHistory(table: HistoryTable, settled: string, cutoff: number, limit: number): Promise<number> {
    const key = KEY[table];
    const text = `WITH gone AS (
      DELETE FROM ${table} WHERE ${key} IN (
        SELECT ${key} FROM ${table} WHERE ${settled.replace("?", "$1")} LIMIT $2 FOR UPDATE SKIP LOCKED)
      RETURNING 1)
    SELECT count(*)::int AS n FROM gone`;
    return Number((await this.run<{ n: number }>(statement(`prune_${table}`, text), [cutoff, limit]))[0]?.n ?? 0);
  }

  async countHistory(table: HistoryTable, settled: string, cutoff: number): Promise<number> {
    const text = `SELECT count(*)::int AS n FROM ${table} WHERE ${settled.replace("?", "$1")}`;
    return Number((await this.run<{ n: number }>(statement(`count_${table}`, text), [cutoff]))[0]?.n ?? 0);
  }
}
