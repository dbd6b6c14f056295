// The runs of the `verify` command, in a file of their own as the notices' table is (re-exported by schema.ts, where
// drizzle-kit reads every table).
import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * A run of the `verify` command: running (one per session at a time), then passed or failed; cancelled when a person,
 * an abort or a stop came first; interrupted when its process died (run again, not counted as a failure).
 */
export const VERIFICATION_STATES = ["running", "passed", "failed", "cancelled", "interrupted"] as const;
export type VerificationState = (typeof VERIFICATION_STATES)[number];

/**
 * One run of the `verify` command on a finished list: the work is done only once one passed. Owned by one process
 * at a time (owner + lease) like a countdown, so that of every process and replica one runs a session's check.
 */
export const verifications = sqliteTable(
  "verifications",
  {
    /** `ver_` and a random part. */
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    directory: text("directory").notNull(),
    server: text("server"),
    command: text("command").notNull(),
    state: text("state", { enum: VERIFICATION_STATES }).notNull(),
    /** The session's continuations since the last real user message when it started: a later one makes it stale. */
    afterContinuations: integer("after_continuations").notNull(),
    startedAt: integer("started_at").notNull(),
    endedAt: integer("ended_at"),
    /** Null while running, and for a run killed at its time limit or never started. */
    exitCode: integer("exit_code"),
    durationMs: integer("duration_ms"),
    /** The output's last lines, and a hash of them: the same failure twice is the same hash. */
    outputTail: text("output_tail"),
    outputHash: text("output_hash"),
    /** A hash of the session's file ledger when it started: no file changed between two runs when they agree. */
    ledgerHash: text("ledger_hash"),
    /** Failed runs of the session since its last real user message, this one included if it failed (set at its end). */
    failures: integer("failures").notNull().default(0),
    /** It failed as the failed run before it did (same output), with no file changed between them (set at its end). */
    repeated: integer("repeated", { mode: "boolean" }).notNull().default(false),
    owner: text("owner"),
    leaseUntil: integer("lease_until"),
  },
  (t) => [
    check("verifications_state_check", sql`${t.state} in ('running', 'passed', 'failed', 'cancelled', 'interrupted')`),
    // One check at a time per session, guaranteed by the database itself.
    uniqueIndex("verifications_one_running_per_session")
      .on(t.sessionId)
      .where(sql`state = 'running'`),
    // A session's runs, latest last: what the guard chain reads.
    index("verifications_session_idx").on(t.sessionId, t.startedAt),
  ],
);
