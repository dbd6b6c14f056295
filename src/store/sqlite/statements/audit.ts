// The audit log on SQLite: its rows, written on the driver itself, and the one question a decision asks of it.
import { and, desc, eq, gte } from "drizzle-orm";
import { auditEvents } from "../../schema.js";
import { p, type SomePrepared } from "./prepare.js";

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

  // One file, one host, one clock: the times every writer stamped compare as they are. Walks audit_session_idx
  // (session, at): a handful of rows at most.
  userCancelledSince: ({ db }) => {
    const select = db
      .select({ at: auditEvents.at })
      .from(auditEvents)
      .where(
        and(
          eq(auditEvents.sessionId, p("sessionId")),
          gte(auditEvents.at, p("since")),
          eq(auditEvents.event, "cancelled"),
          eq(auditEvents.reason, "user_key"),
        ),
      )
      .orderBy(desc(auditEvents.at))
      .prepare();
    return (sessionId, since) => select.get({ sessionId, since })?.at;
  },
} satisfies SomePrepared;
