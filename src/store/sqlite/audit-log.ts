// `audit_events`: every row is written here, and only here, so that every row's detail is built the same way; and the
// one thing the engine reads back from it (a person's cancel, which no other process has in memory).
import { and, desc, eq, gte, sql } from "drizzle-orm";
import type { AuditEntry } from "../../core/reasons.js";
import { auditEvents } from "../schema.js";
import type { SessionScope } from "../port.js";
import type { Db } from "./open.js";
import { auditDetail } from "../audit-detail.js";

const p = (name: string) => sql.placeholder(name);

export class AuditLog {
  private readonly insert;
  private readonly userCancel;

  constructor(db: Db) {
    this.insert = db
      .insert(auditEvents)
      .values({
        at: p("at"),
        sessionId: p("sessionId"),
        directory: p("directory"),
        server: p("server"),
        event: p("event"),
        reason: p("reason"),
        detail: p("detail"),
      })
      .prepare();
    // Walks audit_session_idx (session, at): a handful of rows at most.
    this.userCancel = db
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
      .limit(1)
      .prepare();
  }

  /** One row; a countdown's id leads its detail, so that every row about a countdown can be found by it. */
  write(at: number, scope: Partial<SessionScope>, entry: AuditEntry, countdownId?: string): void {
    this.insert.run(auditDetail(at, scope, entry, countdownId));
  }

  userCancelledSince(sessionId: string, since: number): number | undefined {
    return this.userCancel.get({ sessionId, since })?.at;
  }
}
