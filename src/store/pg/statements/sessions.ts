// The sessions' rows on PostgreSQL: what a change reads and writes of one, and the sessions owed a look.
import { getTableColumns } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { SessionRow } from "../../schema.js";
import { PATCHABLE } from "../../session-columns.js";
import { scopesAsJson } from "../../statements.js";
import type { InScope, OwedLook } from "../../types.js";
import { whole } from "../rows.js";
import { sessions } from "../schema.js";
import { IN_SCOPES, REQUIRED, scoped, selectList, type SomePg } from "./statement.js";

const columnOf = (key: string) => (getTableColumns(sessions) as Record<string, PgColumn>)[key]!.name;

export const SESSIONS = {
  session: {
    sql: `SELECT ${selectList(sessions)} FROM sessions WHERE session_id = $1 LIMIT 1`,
    async run(c, sessionId) {
      return whole(await c.rows<SessionRow>([sessionId]), REQUIRED.session)[0];
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
