// The audit log on PostgreSQL: its rows.
import { AUDIT_COLUMNS, auditParams, auditValues, type SomePg } from "./statement.js";

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
} satisfies SomePg;
