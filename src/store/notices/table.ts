// The notices outbox's table on SQLite (schema.ts re-exports it; kept apart so that each schema file stays short).
import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { NOTICE_STATES } from "./states.js";

export { NOTICE_STATES, type NoticeState } from "./states.js";

/**
 * The outbox of notices (docs/notifications.md): one row per notice and channel, written in the transaction of the stop
 * it reports, then delivered by one process at a time (owner + lease) with retries, until `sent`, `failed` (given up,
 * or refused for good) or `folded` (the rate limit sent a later notice of the session in its place).
 */
export const notices = sqliteTable(
  "notices",
  {
    /** `<notice_id>:<channel>`. */
    id: text("id").primaryKey(),
    /** The notice's own id, the same for each of its channels (the body's `id`). */
    noticeId: text("notice_id").notNull(),
    sessionId: text("session_id").notNull(),
    directory: text("directory").notNull(),
    server: text("server"),
    /** The channel's name in the configuration (its type unless named otherwise). */
    channel: text("channel").notNull(),
    /** `question`, `budget`, `stuck`, `done`, `error`. */
    kind: text("kind").notNull(),
    /** The audit reason of the stop it reports. */
    reason: text("reason").notNull(),
    createdAt: integer("created_at").notNull(),
    /** JSON: the notice as a webhook receives it. */
    body: text("body").notNull(),
    state: text("state", { enum: NOTICE_STATES }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    /** When it is due (again): its first attempt, the next after a backoff, or when the rate limit lets it go. */
    nextAttemptAt: integer("next_attempt_at").notNull(),
    owner: text("owner"),
    leaseUntil: integer("lease_until"),
    sentAt: integer("sent_at"),
    /** The last failure, without secrets: "503 from hooks.example.com", "exit 2: …". */
    lastError: text("last_error"),
    /** For a `folded` notice: the row sent in its place. */
    foldedInto: text("folded_into"),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    check("notices_state_check", sql`${t.state} in ('pending', 'sent', 'failed', 'folded')`),
    // Holds only pending rows: the sender's due scan reads it, whatever the history's size.
    index("notices_due_idx")
      .on(t.nextAttemptAt)
      .where(sql`state = 'pending'`),
  ],
);
