// The SQL of each statement of ../statements.ts on PostgreSQL, named so that node-postgres prepares it once per
// connection. statements.ts runs them.
import { getTableColumns } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { NewBill } from "../schema.js";
import { PATCHABLE } from "../session-columns.js";
import type { Statements } from "../statements.js";
import { statement, type Statement } from "./prepared.js";
import { DB_NOW_MS } from "./rows.js";
import { continuationBills, countdowns, injections, sessions } from "./schema.js";

/** A table's columns as the rows' keys, epoch milliseconds as float8 (both drivers give int8 back as text). */
export function selectList(table: PgTable): string {
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
const FRESH = `heartbeat_at + lease_ms >= ${DB_NOW}`;
/**
 * A row of any of several scopes ($1: one JSON array of `[directory, server]` pairs, bound as text: statements.ts
 * `scopesAsJson`), what a fleet replica reads for all its servers at once. Its own pair is looked up among them: jsonb
 * equality holds null for null, as a scope's server must, and hashes, so a few hundred scopes cost one lookup a row.
 */
const IN_SCOPES = "jsonb_build_array(directory, server) IN (SELECT jsonb_array_elements($1::text::jsonb))";

/** The columns a bill names, in the order insertBill binds them (the database stamps its own clock's). */
export const BILL_KEYS = Object.keys(getTableColumns(continuationBills)).filter((k) => k !== "dbRecordedAt") as Array<
  keyof NewBill
>;
const BILL_COLUMNS = BILL_KEYS.map(
  (key) => (getTableColumns(continuationBills) as Record<string, PgColumn>)[key]!.name,
);

/** Each statement's SQL under the name of the statement it answers (its server-side name the same, in snake case). */
export const S = {
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
  addSpend: statement(
    "add_spend",
    `UPDATE sessions SET continuation_cost = continuation_cost + $2, continuation_tokens = continuation_tokens + $3,
       updated_at = $4 WHERE session_id = $1`,
  ),
  sessionsToRecheck: statement(
    "sessions_to_recheck",
    `SELECT session_id AS "sessionId", recheck_at::float8 AS "recheckAt", owed_since::float8 AS "owedSince" FROM sessions
     WHERE directory = $1 AND server IS NOT DISTINCT FROM $2 AND recheck_at IS NOT NULL AND recheck_at <= $3`,
  ),
  sessionsToRecheckInScopes: statement(
    "sessions_to_recheck_in_scopes",
    `SELECT session_id AS "sessionId", directory, server, recheck_at::float8 AS "recheckAt",
       owed_since::float8 AS "owedSince" FROM sessions
     WHERE recheck_at IS NOT NULL AND recheck_at <= $2 AND ${IN_SCOPES}`,
  ),
  audit: statement("audit", `INSERT INTO ${AUDIT} VALUES (${auditValues(1)})`),
  // Many rows in one round trip, as one JSON array (AuditValues each), in their order.
  auditMany: statement(
    "audit_many",
    `INSERT INTO ${AUDIT}
     SELECT (r->>'at')::bigint, r->>'sessionId', r->>'directory', r->>'server', r->>'event', r->>'reason', r->>'detail'
     FROM jsonb_array_elements($1::text::jsonb) WITH ORDINALITY AS e(r, n) ORDER BY n`,
  ),
  // Since a look began, by the database's clock ($2: how long ago it began, by the reader's). A row written before
  // db_at existed has only its writer's time.
  userCancelledSince: statement(
    "user_cancelled_since",
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
  armedInScopes: statement(
    "armed_in_scopes",
    `SELECT ${selectList(countdowns)} FROM countdowns WHERE state = 'armed' AND ${IN_SCOPES} ORDER BY deadline_at`,
  ),
  ownerAlive: statement("owner_alive", `SELECT 1 AS fresh FROM replicas WHERE id = $1 AND ${FRESH}`),
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
  claimCountdown: statement(
    "claim_countdown",
    `UPDATE countdowns SET state = 'fired', ended_at = $3, end_reason = NULL, lease_until = NULL
     WHERE id = $1 AND state = 'armed' AND owner = $2
       AND EXISTS (SELECT 1 FROM replicas WHERE replicas.id = $2 AND ${FRESH})
     RETURNING id`,
  ),
  // Rows another replica is taking over right now are skipped, not waited for: it will take them.
  // The ids as one JSON array: a recovery takes thousands of countdowns over, and a round trip each cost more than
  // the work itself. Bound as text (Bun's client would send a string bound as jsonb as a JSON string).
  takeOver: statement(
    "take_over",
    `WITH free AS (
       SELECT id FROM countdowns
       WHERE id IN (SELECT jsonb_array_elements_text($1::text::jsonb)) AND state = 'armed' AND owner IS NOT DISTINCT FROM $2
       FOR UPDATE SKIP LOCKED)
     UPDATE countdowns SET owner = $3, lease_until = $4 FROM free WHERE countdowns.id = free.id RETURNING countdowns.id`,
  ),
  expireOrphans: statement(
    "expire_orphans",
    `WITH gone AS (
       SELECT id FROM countdowns
       WHERE id IN (SELECT jsonb_array_elements_text($1::text::jsonb)) AND state = 'armed' AND owner IS NOT DISTINCT FROM $2
       FOR UPDATE SKIP LOCKED)
     UPDATE countdowns SET state = 'expired', ended_at = $4, end_reason = $3, lease_until = NULL
     FROM gone WHERE countdowns.id = gone.id RETURNING countdowns.id`,
  ),
  renewLeases: statement(
    "renew_leases",
    `WITH renewed AS (UPDATE countdowns SET lease_until = $2 WHERE owner = $1 AND state = 'armed' RETURNING 1)
     SELECT count(*)::int AS n FROM renewed`,
  ),
  releaseLeases: statement(
    "release_leases",
    `WITH released AS (
       UPDATE countdowns SET owner = NULL, lease_until = NULL
       WHERE owner = $2 AND state = 'armed' AND ${IN_SCOPES} RETURNING 1)
     SELECT count(*)::int AS n FROM released`,
  ),
  injection: statement("injection", `SELECT ${selectList(injections)} FROM injections WHERE id = $1 LIMIT 1`),
  insertInjection: statement(
    "insert_injection",
    `INSERT INTO injections (id, session_id, countdown_id, directory, server, message_id, created_at, status, agent,
                             model, variant, todos_total, todos_open, attempt, on_sent, owner, lease_until, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $10, $11, $12, $13, $14, $15, $16, $7)`,
  ),
  finishInjection: statement(
    "finish_injection",
    `UPDATE injections SET status = $2, error = $3, updated_at = $4, lease_until = NULL
     WHERE id = $1 AND status = 'pending' RETURNING id`,
  ),
  confirmInjection: statement(
    "confirm_injection",
    `UPDATE injections SET status = 'sent', updated_at = $2, lease_until = NULL
     WHERE id = $1 AND status IN ('failed', 'unknown') RETURNING id`,
  ),
  tuiWatching: statement(
    "tui_watching",
    `SELECT id FROM replicas WHERE kind = 'tui' AND directory = $1 AND ${FRESH} LIMIT 1`,
  ),
  hasPendingInjection: statement(
    "has_pending_injection",
    `SELECT id FROM injections WHERE session_id = $1 AND status = 'pending' LIMIT 1`,
  ),
  // The session's few rows (injections_session_idx), those fired since a look began by the database's clock, as
  // userCancelledSince.
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
  pendingInScopes: statement(
    "pending_in_scopes",
    `SELECT ${selectList(injections)} FROM injections WHERE status = 'pending' AND ${IN_SCOPES} ORDER BY created_at`,
  ),
  uncertainIn: statement(
    "uncertain_in",
    `SELECT ${selectList(injections)} FROM injections
     WHERE session_id = $1 AND created_at >= $2 AND status IN ('failed', 'unknown') ORDER BY created_at DESC LIMIT 10`,
  ),
  insertBill: statement(
    "insert_bill",
    `INSERT INTO continuation_bills (${BILL_COLUMNS.join(", ")})
     VALUES (${BILL_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")}) ON CONFLICT DO NOTHING
     RETURNING injection_id AS "id"`,
  ),
  // Today by the database's clock (UTC), so that a fleet's replicas share one day; rows from before db_recorded_at
  // have only their writer's time.
  spentSince: statement(
    "spent_since",
    `SELECT coalesce(sum(cost), 0)::float8 AS cost FROM continuation_bills
     WHERE recorded_at >= $1::bigint - 86400000
       AND coalesce(db_recorded_at, recorded_at) >= extract(epoch from date_trunc('day', now() AT TIME ZONE 'UTC')) * 1000`,
  ),
  recentBills: statement(
    "recent_bills",
    `SELECT cost::float8 AS cost, tokens::float8 AS tokens FROM continuation_bills
     WHERE session_id = $1 ORDER BY continued_at DESC LIMIT $2`,
  ),
  // The same day as spentSince's.
  recentBillsToday: statement(
    "recent_bills_today",
    `SELECT cost::float8 AS cost, tokens::float8 AS tokens FROM continuation_bills
     WHERE recorded_at >= $1::bigint - 86400000
       AND coalesce(db_recorded_at, recorded_at) >= extract(epoch from date_trunc('day', now() AT TIME ZONE 'UTC')) * 1000
     ORDER BY recorded_at DESC LIMIT $2`,
  ),
  unbilledOf: statement(
    "unbilled_of",
    `SELECT latest.id FROM (SELECT id FROM injections WHERE session_id = $1 AND status IN ('sent', 'unknown')
       ORDER BY created_at DESC LIMIT 1) latest
     WHERE NOT EXISTS (SELECT 1 FROM continuation_bills b WHERE b.injection_id = latest.id)`,
  ),
  unbilledIn: statement(
    "unbilled_in",
    `SELECT i.id AS "injectionId", i.session_id AS "sessionId" FROM injections i
     WHERE i.directory = $1 AND i.server IS NOT DISTINCT FROM $2 AND i.status IN ('sent', 'unknown') AND i.created_at >= $3
       AND NOT EXISTS (SELECT 1 FROM continuation_bills b WHERE b.injection_id = i.id)
     ORDER BY i.created_at`,
  ),
} satisfies { readonly [K in keyof Statements]?: Statement };
