// The enforcer's schema on PostgreSQL: the same tables, columns, defaults and indexes as ../schema.ts (SQLite), kept
// equal by test/store/schemas.postgres.test.ts; every time is epoch milliseconds (epoch-ms.ts). Tables that exist only
// here serve a fleet: replicas' heartbeats (lease liveness across hosts) and the OpenCode servers they follow.
import { sql } from "drizzle-orm";
import { bigserial, check, doublePrecision, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { PARK_REASONS } from "../../core/reasons.js";
import {
  NOTICE_STATES,
  PARK_STATES,
  type CountdownRow,
  type InjectionRow,
  type ParkRow,
  type SessionRow,
  type VerificationRow,
} from "../schema.js";
import { verifications } from "../verifications/pg-table.js";
import { ms } from "./epoch-ms.js";
import { DB_NOW_MS } from "./rows.js";

/**
 * When the row was written, by the database's clock (filled in by the server, never sent): what answered an idle is
 * judged by it, since hosts' clocks disagree. Only here: a SQLite file has one host and one clock. Rows written before
 * this column existed have none, and are judged by the time their writer stamped.
 */
const writtenByDatabase = (name: string) => ms(name).default(sql.raw(DB_NOW_MS));

export const sessions = pgTable(
  "sessions",
  {
    sessionId: text("session_id").primaryKey(),
    directory: text("directory").notNull(),
    server: text("server"),
    projectId: text("project_id"),
    /** The title OpenCode gave the session (its events say it), for the page that lists every session. */
    title: text("title"),
    parentId: text("parent_id"),
    stoppedAt: ms("stopped_at"),
    stopSource: text("stop_source"),
    recoveringSince: ms("recovering_since"),
    lastErrorAt: ms("last_error_at"),
    lastErrorName: text("last_error_name"),
    lastErrorKind: text("last_error_kind"),
    lastErrorRetryAfterMs: ms("last_error_retry_after_ms"),
    errorStreak: integer("error_streak").notNull().default(0),
    abortedAt: ms("aborted_at"),
    tokenLimitAt: ms("token_limit_at"),
    continuations: integer("continuations").notNull().default(0),
    stagnantContinuations: integer("stagnant_continuations").notNull().default(0),
    workContinuations: integer("work_continuations").notNull().default(0),
    fileLedger: text("file_ledger"),
    continuationCost: doublePrecision("continuation_cost").notNull().default(0),
    continuationTokens: ms("continuation_tokens").notNull().default(0),
    allowedContinuations: integer("allowed_continuations").notNull().default(0),
    allowedCost: doublePrecision("allowed_cost").notNull().default(0),
    allowedTokens: ms("allowed_tokens").notNull().default(0),
    unproductiveReplies: integer("unproductive_replies").notNull().default(0),
    todoSnapshot: text("todo_snapshot"),
    consecutiveFailures: integer("consecutive_failures").notNull().default(0),
    backoffUntil: ms("backoff_until"),
    lastUserMessageAt: ms("last_user_message_at"),
    pausedAt: ms("paused_at"),
    pauseMessageId: text("pause_message_id"),
    pauseBaseline: text("pause_baseline"),
    recheckAt: ms("recheck_at"),
    owedSince: ms("owed_since"),
    resumedAt: ms("resumed_at"),
    notifiedStop: text("notified_stop"),
    /** JSON: why the session was woken from its park (core/wake-note.ts), until the continuation that says so goes out. */
    wakeNote: text("wake_note"),
    agent: text("agent"),
    modelProvider: text("model_provider"),
    modelId: text("model_id"),
    variant: text("variant"),
    deletedAt: ms("deleted_at"),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [
    index("sessions_directory_idx").on(t.directory),
    // Holds only stopped sessions (what `status` lists): a session's every other write leaves it untouched.
    index("sessions_stopped_idx")
      .on(t.stoppedAt)
      .where(sql`stopped_at IS NOT NULL`),
    // Holds only the sessions owed a look: every lease tick asks for those due, and a fleet's servers often share one
    // directory, which the directory's index cannot narrow.
    index("sessions_recheck_idx")
      .on(t.recheckAt)
      .where(sql`recheck_at IS NOT NULL`),
  ],
);

export const countdowns = pgTable(
  "countdowns",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    directory: text("directory").notNull(),
    server: text("server"),
    armedAt: ms("armed_at").notNull(),
    deadlineAt: ms("deadline_at").notNull(),
    state: text("state", { enum: ["armed", "fired", "cancelled", "expired"] }).notNull(),
    endedAt: ms("ended_at"),
    endReason: text("end_reason"),
    owner: text("owner"),
    leaseUntil: ms("lease_until"),
    attempt: integer("attempt").notNull().default(0),
    todosOpen: integer("todos_open"),
    todosTotal: integer("todos_total"),
  },
  (t) => [
    check("countdowns_state_check", sql`${t.state} in ('armed', 'fired', 'cancelled', 'expired')`),
    uniqueIndex("countdowns_one_armed_per_session")
      .on(t.sessionId)
      .where(sql`state = 'armed'`),
  ],
);

/** A durable wait on one session: see ../schema.ts. Leases are the database's clock here, as countdowns'. */
export const parks = pgTable(
  "parks",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    directory: text("directory").notNull(),
    server: text("server"),
    reason: text("reason", { enum: PARK_REASONS }).notNull(),
    state: text("state", { enum: PARK_STATES }).notNull(),
    parkedAt: ms("parked_at").notNull(),
    wakeAt: ms("wake_at").notNull(),
    since: ms("since").notNull(),
    backoffMs: ms("backoff_ms"),
    checkCommand: text("check_command"),
    checkEveryMs: ms("check_every_ms"),
    checkRuns: integer("check_runs").notNull().default(0),
    nextCheckAt: ms("next_check_at"),
    /** The last lines of the check's last run that did not pass (what a wake at its time says it last printed). */
    checkOutput: text("check_output"),
    endedAt: ms("ended_at"),
    endReason: text("end_reason"),
    owner: text("owner"),
    leaseUntil: ms("lease_until"),
    detail: text("detail"),
  },
  (t) => [
    check("parks_reason_check", sql`${t.reason} in ('limit', 'opencode_retry', 'agent')`),
    check("parks_state_check", sql`${t.state} in ('parked', 'woke', 'unparked')`),
    uniqueIndex("parks_one_parked_per_session")
      .on(t.sessionId)
      .where(sql`state = 'parked'`),
    index("parks_due_idx")
      .on(t.wakeAt)
      .where(sql`state = 'parked'`),
    // With it, "its time or its next check has come" is two index searches, not a scan of every parked row (the OR of
    // the two could use neither index alone: 12 ms a lease tick with 50,000 parked on SQLite).
    // Only parks with a check: a park without one (most) neither writes it when parked nor when it ends.
    index("parks_check_due_idx")
      .on(t.nextCheckAt)
      .where(sql`state = 'parked' AND next_check_at IS NOT NULL`),
    // A session's latest park, whatever its state: a limit's run of parks goes on from it.
    index("parks_session_idx").on(t.sessionId, t.parkedAt),
  ],
);

export const injections = pgTable(
  "injections",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    countdownId: text("countdown_id").notNull(),
    directory: text("directory").notNull(),
    server: text("server"),
    messageId: text("message_id"),
    createdAt: ms("created_at").notNull(),
    status: text("status", { enum: ["pending", "sent", "failed", "unknown"] }).notNull(),
    agent: text("agent"),
    model: text("model"),
    variant: text("variant"),
    todosTotal: integer("todos_total").notNull(),
    todosOpen: integer("todos_open").notNull(),
    error: text("error"),
    attempt: integer("attempt").notNull().default(0),
    onSent: text("on_sent"),
    owner: text("owner"),
    leaseUntil: ms("lease_until"),
    updatedAt: ms("updated_at").notNull(),
    dbCreatedAt: writtenByDatabase("db_created_at"),
  },
  (t) => [
    check("injections_status_check", sql`${t.status} in ('pending', 'sent', 'failed', 'unknown')`),
    uniqueIndex("injections_countdown_unique").on(t.countdownId),
    index("injections_session_idx").on(t.sessionId, t.createdAt),
    index("injections_status_idx").on(t.status, t.directory),
    index("injections_created_idx").on(t.createdAt),
  ],
);

export const auditEvents = pgTable(
  "audit_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    at: ms("at").notNull(),
    sessionId: text("session_id"),
    directory: text("directory"),
    server: text("server"),
    event: text("event").notNull(),
    reason: text("reason"),
    detail: text("detail"),
    dbAt: writtenByDatabase("db_at"),
  },
  (t) => [index("audit_session_idx").on(t.sessionId, t.at), index("audit_event_reason_idx").on(t.event, t.reason)],
);

// ── fleet tables (PostgreSQL only) ──────────────────────────────────────────────────────────────────────────

export const continuationBills = pgTable(
  "continuation_bills",
  {
    injectionId: text("injection_id").primaryKey(),
    sessionId: text("session_id").notNull(),
    directory: text("directory").notNull(),
    server: text("server"),
    messageId: text("message_id").notNull(),
    continuedAt: ms("continued_at").notNull(),
    recordedAt: ms("recorded_at").notNull(),
    outcome: text("outcome", { enum: ["completed", "error", "aborted", "interrupted", "no_turn"] }).notNull(),
    error: text("error"),
    finish: text("finish"),
    providerId: text("provider_id"),
    modelId: text("model_id"),
    messages: integer("messages").notNull().default(0),
    steps: integer("steps").notNull().default(0),
    toolCalls: integer("tool_calls").notNull().default(0),
    inputTokens: ms("input_tokens").notNull().default(0),
    outputTokens: ms("output_tokens").notNull().default(0),
    reasoningTokens: ms("reasoning_tokens").notNull().default(0),
    cacheReadTokens: ms("cache_read_tokens").notNull().default(0),
    cacheWriteTokens: ms("cache_write_tokens").notNull().default(0),
    tokens: ms("tokens").notNull().default(0),
    cost: doublePrecision("cost").notNull().default(0),
    startedAt: ms("started_at"),
    endedAt: ms("ended_at"),
    todosClosed: integer("todos_closed"),
    progressed: integer("progressed"),
    filesChanged: integer("files_changed"),
    sessionCost: doublePrecision("session_cost"),
    sessionTokens: ms("session_tokens"),
    /** The daily cap's day on a fleet: the database's clock, not a replica's. */
    dbRecordedAt: writtenByDatabase("db_recorded_at"),
  },
  (t) => [
    check(
      "continuation_bills_outcome_check",
      sql`${t.outcome} in ('completed', 'error', 'aborted', 'interrupted', 'no_turn')`,
    ),
    index("continuation_bills_session_idx").on(t.sessionId, t.continuedAt),
    index("continuation_bills_recorded_idx").on(t.recordedAt),
  ],
);

/** The outbox of notices: see ../schema.ts. Leases are the database's clock here, as countdowns'. */
export const notices = pgTable(
  "notices",
  {
    id: text("id").primaryKey(),
    noticeId: text("notice_id").notNull(),
    sessionId: text("session_id").notNull(),
    directory: text("directory").notNull(),
    server: text("server"),
    channel: text("channel").notNull(),
    kind: text("kind").notNull(),
    reason: text("reason").notNull(),
    createdAt: ms("created_at").notNull(),
    body: text("body").notNull(),
    state: text("state", { enum: NOTICE_STATES }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ms("next_attempt_at").notNull(),
    owner: text("owner"),
    leaseUntil: ms("lease_until"),
    sentAt: ms("sent_at"),
    lastError: text("last_error"),
    foldedInto: text("folded_into"),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [
    check("notices_state_check", sql`${t.state} in ('pending', 'sent', 'failed', 'folded')`),
    index("notices_due_idx")
      .on(t.nextAttemptAt)
      .where(sql`state = 'pending'`),
  ],
);

/**
 * One row per running process (plugin or service replica) that owns leases. Its heartbeat is the database's clock,
 * never the host's: on another host a pid means nothing, and hosts' clocks drift. An owner is alive while its
 * heartbeat is younger than its own `lease_ms`.
 */
export const replicas = pgTable("replicas", {
  id: text("id").primaryKey(),
  /** `plugin`, `service` (one server), `fleet` (a replica sharing the `servers` with the others), `tui`, `cli`. */
  kind: text("kind").notNull(),
  host: text("host").notNull(),
  pid: integer("pid").notNull(),
  startedAt: ms("started_at").notNull(),
  heartbeatAt: ms("heartbeat_at").notNull(),
  leaseMs: ms("lease_ms").notNull(),
  version: text("version"),
  /** The project folder it works for, when it has one: a TUI draws the countdowns of this folder's sessions. */
  directory: text("directory"),
});

/**
 * The OpenCode servers a fleet follows (`todo-continuation servers add`). Each is followed by one fleet replica at a
 * time: `owner` is that replica's id, valid while its heartbeat is fresh; a server whose owner is gone is free.
 * No password is stored: `password_env` names the environment variable each replica reads it from.
 */
export const servers = pgTable("servers", {
  /** How rows name the server (`sessions.server` and the others). */
  name: text("name").primaryKey(),
  /** Its base URL, without credentials. */
  url: text("url").notNull(),
  /** The project directory whose sessions are followed. */
  directory: text("directory").notNull(),
  username: text("username"),
  passwordEnv: text("password_env"),
  addedAt: ms("added_at").notNull(),
  owner: text("owner"),
  /** When the current owner took it (the database's clock). */
  ownedSince: ms("owned_since"),
  /** Until when its last follower had the event stream (the database's clock): a successor catches up from there. */
  seenUntil: ms("seen_until"),
});

// The views users' SQL reads (created by a migration), declared beside the tables for drizzle-kit.
export * from "./views.js";
// The runs of the `verify` command, in a file of their own beside their SQLite twin (read here by drizzle-kit too).
export { verifications };

export const pgSchema = {
  sessions,
  countdowns,
  parks,
  verifications,
  injections,
  auditEvents,
  replicas,
  servers,
  continuationBills,
  notices,
};
export type PgSchema = typeof pgSchema;

// The row types the engine sees are the SQLite ones; these fail to compile the day the two drift apart.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const rowTypesAgree: [
  Same<typeof sessions.$inferSelect, SessionRow>,
  Same<typeof countdowns.$inferSelect, CountdownRow>,
  Same<typeof parks.$inferSelect, ParkRow>,
  Same<Omit<typeof injections.$inferSelect, "dbCreatedAt">, InjectionRow>,
  Same<typeof verifications.$inferSelect, VerificationRow>,
] = [true, true, true, true, true];
