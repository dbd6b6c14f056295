// The runs of the `verify` command on PostgreSQL: the same columns, checks and indexes as ./table.ts (SQLite), kept
// equal by test/store/schemas.postgres.test.ts; re-exported by ../pg/schema.ts, where drizzle-kit reads every table.
import { sql } from "drizzle-orm";
import { boolean, check, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { ms } from "../pg/epoch-ms.js";
import { VERIFICATION_STATES } from "./table.js";

/** See ./table.ts: one run of the `verify` command, owned like a countdown. */
export const verifications = pgTable(
  "verifications",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    directory: text("directory").notNull(),
    server: text("server"),
    command: text("command").notNull(),
    state: text("state", { enum: VERIFICATION_STATES }).notNull(),
    afterContinuations: integer("after_continuations").notNull(),
    startedAt: ms("started_at").notNull(),
    endedAt: ms("ended_at"),
    exitCode: integer("exit_code"),
    durationMs: ms("duration_ms"),
    outputTail: text("output_tail"),
    outputHash: text("output_hash"),
    ledgerHash: text("ledger_hash"),
    failures: integer("failures").notNull().default(0),
    repeated: boolean("repeated").notNull().default(false),
    owner: text("owner"),
    leaseUntil: ms("lease_until"),
  },
  (t) => [
    check("verifications_state_check", sql`${t.state} in ('running', 'passed', 'failed', 'cancelled', 'interrupted')`),
    uniqueIndex("verifications_one_running_per_session")
      .on(t.sessionId)
      .where(sql`state = 'running'`),
    index("verifications_session_idx").on(t.sessionId, t.startedAt),
  ],
);
