// The sessions' rows on PostgreSQL: what a change reads and writes of one, and the sessions owed a look.
import { createHash } from "node:crypto";
import { getTableColumns } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { SessionRow } from "../../schema.js";
import { PATCHABLE, patchedColumns, type PatchableColumn } from "../../session-columns.js";
import { statement, type Statement } from "../prepared.js";
import { scopesAsJson } from "../../statements.js";
import type { InScope, OwedLook } from "../../types.js";
import { sessionStateOf, splitStateRow } from "../../session-state.js";
import { IncompleteAnswerError, whole } from "../rows.js";
import { sessions } from "../schema.js";
import { ago, DB_NOW, IN_SCOPES, REQUIRED, scoped, selectList, type SomePg } from "./statement.js";

/**
 * `sessionState` in one statement: the session's row (NULLs when it has none) beside the other tables' answers, each
 * found by the session's own index. Without an idle, $2 is NULL and the key and the continuation since find nothing;
 * with one, they are those since the look began by the database's clock ($2: how long ago it began, by the reader's),
 * as `continuedSince` finds them (a row written before db_at existed has only its writer's time).
 */
const SESSION_STATE = `SELECT ${selectList(sessions, "s")},
    EXISTS (SELECT 1 FROM injections WHERE session_id = k.id AND status = 'pending') AS "pending",
    p.id AS "parkId", p.reason AS "parkReason", p.wake_at::float8 AS "parkWakeAt",
    c.id AS "armedId", c.owner AS "armedOwner", c.lease_until::float8 AS "armedLeaseUntil",
    (SELECT at::float8 FROM audit_events WHERE session_id = k.id AND coalesce(db_at, at) >= ${DB_NOW} - k.ago
      AND event = 'cancelled' AND reason = 'user_key' ORDER BY id DESC LIMIT 1) AS "userCancelledAt",
    a.id AS "answeredId", a.created_at::float8 AS "answeredAt"
  FROM (SELECT $1::text AS id, $2::bigint AS ago) AS k
    LEFT JOIN sessions s ON s.session_id = k.id
    LEFT JOIN parks p ON p.session_id = k.id AND p.state = 'parked'
    LEFT JOIN countdowns c ON c.session_id = k.id AND c.state = 'armed'
    LEFT JOIN LATERAL (SELECT id, created_at FROM injections
      WHERE session_id = k.id AND coalesce(db_created_at, created_at) >= ${DB_NOW} - k.ago
        AND status IN ('pending', 'sent', 'unknown')
      ORDER BY coalesce(db_created_at, created_at) DESC LIMIT 1) AS a ON true`;

const columnOf = (key: string) => (getTableColumns(sessions) as Record<string, PgColumn>)[key]!.name;

const upserts = new Map<string, Statement>();

/** `upsertSession`'s statement for these columns ($5 on), made once a process. */
function upsertFor(columns: readonly PatchableColumn[]): Statement {
  const key = columns.join(",");
  const made = upserts.get(key);
  if (made) return made;
  const names = columns.map(columnOf);
  const text = `INSERT INTO sessions (session_id, directory, server, created_at, updated_at${names.map((n) => `, ${n}`).join("")})
    VALUES ($1, $2, $3, $4, $4${names.map((_, i) => `, $${i + 5}`).join("")})
    ON CONFLICT (session_id) DO UPDATE SET ${[...names, "updated_at"].map((n) => `${n} = EXCLUDED.${n}`).join(", ")}
    RETURNING ${selectList(sessions)}`;
  const upsert = statement(`upsert_session_${createHash("sha1").update(key).digest("hex").slice(0, 16)}`, text);
  upserts.set(key, upsert);
  return upsert;
}

export const SESSIONS = {
  session: {
    sql: `SELECT ${selectList(sessions)} FROM sessions WHERE session_id = $1 LIMIT 1`,
    async run(c, sessionId) {
      return whole(await c.rows<SessionRow>([sessionId]), REQUIRED.session)[0];
    },
  },

  sessionState: {
    sql: SESSION_STATE,
    async run(c, sessionId, idle) {
      const [found] = await c.rows<Record<string, unknown>>([sessionId, idle ? ago(idle.since, idle.now) : null]);
      if (!found) throw new IncompleteAnswerError("the session's state");
      const { row, columns } = splitStateRow(found);
      return sessionStateOf(row && whole([row as SessionRow], REQUIRED.session)[0], columns);
    },
  },

  insertSession: {
    sql: `INSERT INTO sessions (session_id, directory, server, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
      ON CONFLICT DO NOTHING`,
    async run(c, scope, now) {
      await c.rows([scope.sessionId, scope.directory, scope.server ?? null, now]);
    },
  },

  writeSession: {
    sql: `UPDATE sessions SET ${PATCHABLE.map((key, i) => `${columnOf(key)} = $${i + 2}`).join(", ")},
      updated_at = $${PATCHABLE.length + 2} WHERE session_id = $1`,
    async run(c, row) {
      await c.rows([row.sessionId, ...PATCHABLE.map((key) => row[key] ?? null), row.updatedAt]);
    },
  },

  // One named statement per set of columns written (a handful: the changes' fixed patches), named by the set.
  upsertSession: {
    async run(c, scope, update, now) {
      const columns = patchedColumns(update);
      const values = [scope.sessionId, scope.directory, scope.server ?? null, now];
      for (const column of columns) values.push(update[column] ?? null);
      const [row] = whole(await c.rowsOf<SessionRow>(upsertFor(columns), values), REQUIRED.session);
      if (!row) throw new IncompleteAnswerError("the session row as written");
      return row;
    },
  },

  noteWake: {
    sql: `UPDATE sessions SET recheck_at = $2, owed_since = $3, wake_note = $4, updated_at = $5 WHERE session_id = $1
      RETURNING session_id AS "sessionId", recheck_at::float8 AS "recheckAt", owed_since::float8 AS "owedSince"`,
    async run(c, sessionId, wake, now) {
      const rows = await c.rows<OwedLook>([sessionId, wake.recheckAt, wake.owedSince, wake.wakeNote, now]);
      return whole(rows, ["sessionId", "recheckAt"])[0];
    },
  },

  sessionsToRecheck: {
    sql: `SELECT session_id AS "sessionId", recheck_at::float8 AS "recheckAt", owed_since::float8 AS "owedSince"
      FROM sessions
      WHERE directory = $1 AND server IS NOT DISTINCT FROM $2 AND recheck_at IS NOT NULL AND recheck_at <= $3`,
    async run(c, scope, dueBy) {
      return whole(await c.rows<OwedLook>([...scoped(scope), dueBy]), ["sessionId", "recheckAt"]);
    },
  },

  sessionsToRecheckInScopes: {
    sql: `SELECT session_id AS "sessionId", directory, server, recheck_at::float8 AS "recheckAt",
        owed_since::float8 AS "owedSince" FROM sessions
      WHERE recheck_at IS NOT NULL AND recheck_at <= $2 AND ${IN_SCOPES}`,
    async run(c, scopes, dueBy) {
      const rows = await c.rows<InScope<OwedLook>>([scopesAsJson(scopes), dueBy]);
      return whole(rows, ["sessionId", "directory", "recheckAt"]);
    },
  },
} satisfies SomePg;
