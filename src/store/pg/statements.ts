// The statements every state change runs, written out in SQL and, under node-postgres, prepared once per connection.
// Measured on this project's 2-core machine: drizzle's query builder spent 100–200 µs of CPU building each of these
// inserts, and PostgreSQL ~100 µs parsing and planning each unnamed statement, together more than running them; a
// countdown's row and its audit row are also one statement here (a data-modifying WITH). A state change so costs
// about what the same rows written by hand cost. The store suite, run on both backends, checks that they write
// what SQLite's store writes.
import { sql, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type { AuditEntry } from "../../core/reasons.js";
import { auditDetail } from "../audit-detail.js";
import type { ArmedRef, ContinuationRef, CountdownEnd, CountdownRef, NewCountdown, SessionScope } from "../port.js";
import type { PgDb } from "./open.js";
import { rowsOf, whole } from "./rows.js";
import { isBun } from "../sqlite/open.js";

const dialect = new PgDialect();
interface NodePgQueryable {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/**
 * `query`'s rows. Under node-postgres it runs as the named statement `name` (the driver parses it once per
 * connection and then only binds); Bun's client prepares what it runs by itself. A name stands for one text only.
 */
async function run<T>(db: PgDb, name: string, query: SQL): Promise<T[]> {
  if (isBun) return rowsOf<T>(await db.execute(query));
  const client = (db as unknown as { $client: NodePgQueryable }).$client;
  const { sql: text, params } = dialect.sqlToQuery(query);
  return (await client.query({ name, text, values: params })).rows as T[];
}

/** The first key of every session lock ("tc"): keeps them apart from other applications' advisory locks. */
const SESSION_LOCK_SPACE = 0x7463;
const AUDIT_COLUMNS = sql.raw("audit_events (at, session_id, directory, server, event, reason, detail)");

/** One audit row's values, typed: in `INSERT … SELECT` PostgreSQL would take an untyped parameter for text. */
function auditValues(at: number, scope: Partial<SessionScope>, entry: AuditEntry, countdownId?: string): SQL {
  const row = auditDetail(at, scope, entry, countdownId);
  return sql`${row.at}::bigint, ${row.sessionId}::text, ${row.directory}::text, ${row.server}::text,
             ${row.event}::text, ${row.reason}::text, ${row.detail}::text`;
}

/**
 * Takes the session's lock for the rest of the transaction: changes to one session serialize across processes and
 * hosts (no row needs to exist for it) while other sessions go on in parallel.
 */
export async function lockSession(db: PgDb, sessionId: string): Promise<void> {
  await run(db, "tc_lock_session", sql`SELECT pg_advisory_xact_lock(${SESSION_LOCK_SPACE}, hashtext(${sessionId}))`);
}

export async function insertAudit(
  db: PgDb,
  at: number,
  scope: Partial<SessionScope>,
  entry: AuditEntry,
  countdownId?: string,
): Promise<void> {
  await run(
    db,
    "tc_insert_audit",
    sql`INSERT INTO ${AUDIT_COLUMNS} VALUES (${auditValues(at, scope, entry, countdownId)})`,
  );
}

/** Inserts an armed countdown and its `armed` audit row. */
export async function insertArmedCountdown(db: PgDb, c: NewCountdown, entry: AuditEntry): Promise<void> {
  await run(
    db,
    "tc_insert_armed_countdown",
    sql`
    WITH armed AS (
      INSERT INTO countdowns (id, session_id, directory, server, armed_at, deadline_at, state, owner, lease_until,
                              attempt, todos_open, todos_total)
      VALUES (${c.id}, ${c.sessionId}, ${c.directory}, ${c.server ?? null}, ${c.armedAt}, ${c.deadlineAt}, 'armed',
              ${c.owner}, ${c.leaseUntil}, ${c.attempt}, ${c.todosOpen}, ${c.todosTotal})
      RETURNING id)
    INSERT INTO ${AUDIT_COLUMNS} SELECT ${auditValues(c.armedAt, c, entry, c.id)} FROM armed`,
  );
}

/** The session's armed countdown, if any (epoch milliseconds as float8: both drivers give int8 back as text). */
export async function armedCountdownOf(db: PgDb, sessionId: string): Promise<ArmedRef | undefined> {
  const rows = await run<{ id: string; owner: string | null; leaseUntil: number | null }>(
    db,
    "tc_armed_countdown_of",
    sql`
      SELECT id, owner, lease_until::float8 AS "leaseUntil"
      FROM countdowns WHERE session_id = ${sessionId} AND state = 'armed' LIMIT 1`,
  );
  return whole(rows, ["id"])[0];
}

/** The latest continuation of the session fired at or after `since` and not refused (injections_session_idx). */
export async function continuationSince(
  db: PgDb,
  sessionId: string,
  since: number,
): Promise<ContinuationRef | undefined> {
  const rows = await run<{ injectionId: string; firedAt: number }>(
    db,
    "tc_continuation_since",
    sql`
      SELECT id AS "injectionId", created_at::float8 AS "firedAt"
      FROM injections
      WHERE session_id = ${sessionId} AND created_at >= ${since} AND status IN ('pending', 'sent', 'unknown')
      ORDER BY created_at DESC LIMIT 1`,
  );
  return whole(rows, ["injectionId", "firedAt"])[0];
}

/**
 * Moves a countdown from armed to the end's state and writes the end's audit row; false, and nothing written, when it
 * was no longer armed (another writer got there first).
 */
export async function endArmedCountdown(
  db: PgDb,
  countdown: CountdownRef,
  end: CountdownEnd,
  now: number,
): Promise<boolean> {
  const rows = await run<{ id: unknown }>(
    db,
    "tc_end_armed_countdown",
    sql`
      WITH ended AS (
        UPDATE countdowns SET state = ${end.state}, ended_at = ${now}, end_reason = ${end.audit.reason ?? null},
                              lease_until = NULL
        WHERE id = ${countdown.id} AND state = 'armed'
        RETURNING id)
      INSERT INTO ${AUDIT_COLUMNS} SELECT ${auditValues(now, countdown, end.audit, countdown.id)} FROM ended
      RETURNING id`,
  );
  return whole(rows, ["id"]).length > 0;
}
