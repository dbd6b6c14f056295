// The audit log on SQLite: its rows, written on the driver itself.
import type { SomePrepared } from "./prepare.js";

/**
 * One audit row (bound in AuditValues' order), prepared on the driver itself: every state change writes one or more,
 * a recovery thousands in a row.
 */
const INSERT_AUDIT_ROW = `INSERT INTO audit_events (at, session_id, directory, server, event, reason, detail)
  VALUES (?, ?, ?, ?, ?, ?, ?)`;

export const AUDIT = {
  audit: ({ raw }) => {
    const insert = raw.prepare(INSERT_AUDIT_ROW);
    return ({ at, sessionId, directory, server, event, reason, detail }) =>
      void insert.run(at, sessionId, directory, server, event, reason, detail);
  },

  auditMany:
    ({ statements }) =>
    (rows) => {
      for (const row of rows) statements.audit(row);
    },
} satisfies SomePrepared;
