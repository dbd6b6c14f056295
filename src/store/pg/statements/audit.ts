// The audit log on PostgreSQL: its rows, and the one question a decision asks of it.
import { AUDIT_COLUMNS, auditParams, auditValues, ago, DB_NOW, type SomePg } from "./statement.js";
import { whole } from "../rows.js";

export const AUDIT = {
  audit: {
    sql: `INSERT INTO ${AUDIT_COLUMNS} VALUES (${auditValues(1)})`,
    async run(c, row) {
      await c.rows(auditParams(row));
    },
  },

  // Many rows in one round trip, as one JSON array (AuditValues each), in their order.
  auditMany: {
    sql: `INSERT INTO ${AUDIT_COLUMNS}
      SELECT (r->>'at')::bigint, r->>'sessionId', r->>'directory', r->>'server', r->>'event', r->>'reason', r->>'detail'
      FROM jsonb_array_elements($1::text::jsonb) WITH ORDINALITY AS e(r, n) ORDER BY n`,
    async run(c, rows) {
      if (rows.length > 0) await c.rows([JSON.stringify(rows)]);
    },
  },

  // Since a look began, by the database's clock ($2: how long ago it began, by the reader's). A row written before
  // db_at existed has only its writer's time.
  userCancelledSince: {
    sql: `SELECT at::float8 AS at FROM audit_events
      WHERE session_id = $1 AND coalesce(db_at, at) >= ${DB_NOW} - $2::bigint AND event = 'cancelled'
        AND reason = 'user_key'
      ORDER BY id DESC LIMIT 1`,
    async run(c, sessionId, since, now) {
      return whole(await c.rows<{ at: number }>([sessionId, ago(since, now)]), ["at"])[0]?.at;
    },
  },
} satisfies SomePg;
