// The one schema of the enforcer's database. Users query these tables with SQL (see README "Query it yourself"),
// so column names are part of the public contract. All times are integer epoch milliseconds (UTC).
import { sql } from "drizzle-orm";
import { check, index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { PARK_REASONS } from "../core/reasons.js";
import { notices } from "./notices/table.js";
import { verifications } from "./verifications/table.js";

export const COUNTDOWN_STATES = ["armed", "fired", "cancelled", "expired"] as const;
export type CountdownState = (typeof COUNTDOWN_STATES)[number];

export const PARK_STATES = ["parked", "woke", "unparked"] as const;
export type ParkState = (typeof PARK_STATES)[number];
export const INJECTION_STATUSES = ["pending", "sent", "failed", "unknown"] as const;
export type InjectionStatus = (typeof INJECTION_STATUSES)[number];

/** Durable per-session state: everything the guards need that must survive a restart. */
export const sessions = sqliteTable(
  "sessions",
  {
    sessionId: text("session_id").primaryKey(),
    /** The OpenCode instance directory the session belongs to: the scope a process recovers at start. */
    directory: text("directory").notNull(),
    /**
     * The OpenCode server it lives on, when one database serves several (see README "Fleet"): the name under which a
     * fleet follows it, or the host name of a plugin on PostgreSQL. Null for a machine's own file.
     */
    server: text("server"),
    projectId: text("project_id"),
    /** The title OpenCode gave the session (its events say it), for the page that lists every session. */
    title: text("title"),
    parentId: text("parent_id"),
    /** Durable stop: set by /stop-continuation, the CLI or the API; lifted only by resume or session deletion. */
    stoppedAt: integer("stopped_at"),
    stopSource: text("stop_source"),
    recoveringSince: integer("recovering_since"),
    lastErrorAt: integer("last_error_at"),
    lastErrorName: text("last_error_name"),
    /** `abort`, `token_limit` or `other`. */
    lastErrorKind: text("last_error_kind"),
    /** The provider's retry-after of the last error, in ms from `last_error_at`. */
    lastErrorRetryAfterMs: integer("last_error_retry_after_ms"),
    /** Provider errors (transient or other) in a row, since a turn that ended well or a real user message. */
    errorStreak: integer("error_streak").notNull().default(0),
    abortedAt: integer("aborted_at"),
    tokenLimitAt: integer("token_limit_at"),
    /** Continuations delivered since the last real user message (the budget). */
    continuations: integer("continuations").notNull().default(0),
    /** Continuations since the todos' statuses last moved whose turns did no work either. */
    stagnantContinuations: integer("stagnant_continuations").notNull().default(0),
    /** Continuations since the todos' statuses last moved whose turns changed the project's files. */
    workContinuations: integer("work_continuations").notNull().default(0),
    /**
     * JSON file ledger `{files: {absolute path: [content hash | null, …]}}`: the latest contents (oldest first) of the
     * files the session's turns touched since the last real user message, what a turn's changes are judged against.
     */
    fileLedger: text("file_ledger"),
    /** What the session's continuations cost since the last real user message or resume (their bills). */
    continuationCost: real("continuation_cost").notNull().default(0),
    continuationTokens: integer("continuation_tokens").notNull().default(0),
    /**
     * Granted by `todo-continuation allow` (or the palette's "Allow more") since the last real user message: added to
     * `maxContinuations`, the cost caps (the session's and, for this session, the day's) and the token cap.
     */
    allowedContinuations: integer("allowed_continuations").notNull().default(0),
    allowedCost: real("allowed_cost").notNull().default(0),
    allowedTokens: integer("allowed_tokens").notNull().default(0),
    /** Continuations in a row answered with text only (no tool call, no edit). */
    unproductiveReplies: integer("unproductive_replies").notNull().default(0),
    /**
     * JSON progress ledger `{closedHigh, ranks: {todo text: 0|1|2}}` over the continuations since the last real user
     * message: the baseline progress is measured against (rows of earlier versions hold `[{content,status}]`).
     */
    todoSnapshot: text("todo_snapshot"),
    consecutiveFailures: integer("consecutive_failures").notNull().default(0),
    backoffUntil: integer("backoff_until"),
    lastUserMessageAt: integer("last_user_message_at"),
    /** A real user message followed one of our continuations: no continuation until progress or a resume. */
    pausedAt: integer("paused_at"),
    pauseMessageId: text("pause_message_id"),
    /** JSON progress ledger of the todos when the user took over. */
    pauseBaseline: text("pause_baseline"),
    /**
     * The enforcer owes this session a look at this time: an idle not decided yet, or a continuation whose turn has
     * not been seen starting. A process that starts re-evaluates these (within the resume window).
     */
    recheckAt: integer("recheck_at"),
    /**
     * When the idle that the owed look (`recheck_at`) judges was seen: a continuation fired since then answered it, so
     * a retry due long after its idle yields to one. Null: the idle is as old as `recheck_at`.
     */
    owedSince: integer("owed_since"),
    /** The last explicit resume: an error the session's messages still show from before it no longer holds it. */
    resumedAt: integer("resumed_at"),
    /** The reason continuation ended that the user was last told about (a toast once per stop, not per idle). */
    notifiedStop: text("notified_stop"),
    /** JSON: why the session was woken from its park (core/wake-note.ts), until the continuation that says so goes out. */
    wakeNote: text("wake_note"),
    agent: text("agent"),
    modelProvider: text("model_provider"),
    modelId: text("model_id"),
    variant: text("variant"),
    deletedAt: integer("deleted_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
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

/** A countdown between an eligible idle and the injection. Owned by one process at a time (owner + lease). */
export const countdowns = sqliteTable(
  "countdowns",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    directory: text("directory").notNull(),
    server: text("server"),
    armedAt: integer("armed_at").notNull(),
    deadlineAt: integer("deadline_at").notNull(),
    state: text("state", { enum: COUNTDOWN_STATES }).notNull(),
    endedAt: integer("ended_at"),
    endReason: text("end_reason"),
    owner: text("owner"),
    leaseUntil: integer("lease_until"),
    /** 0 for a countdown armed by an idle; n for the n-th retry after a failed injection. */
    attempt: integer("attempt").notNull().default(0),
    todosOpen: integer("todos_open"),
    todosTotal: integer("todos_total"),
  },
  (t) => [
    check("countdowns_state_check", sql`${t.state} in ('armed', 'fired', 'cancelled', 'expired')`),
    // The database itself guarantees at most one armed countdown per session.
    // Holds only armed rows: it finds a session's armed countdown and all armed countdowns of a scope (few rows).
    uniqueIndex("countdowns_one_armed_per_session")
      .on(t.sessionId)
      .where(sql`state = 'armed'`),
    // Deliberately no more indexes: every index is one more page written by each arm and cancel. History by session
    // goes through injections; retention finds old rows in rowid (= time) order.
  ],
);

/**
 * A durable wait on one session (a park): until a time (a provider's usage limit resets, or the agent asked to continue
 * later) or until a shell check passes. It costs no model call while it holds, and ends by waking (a look, then a
 * normal countdown) or by being dropped. Owned by one process at a time (owner + lease), as countdowns are.
 */
export const parks = sqliteTable(
  "parks",
  {
    /** `park_` and a random part. */
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    directory: text("directory").notNull(),
    server: text("server"),
    /** `limit` (a provider's usage limit), `opencode_retry` (OpenCode waits to retry), `agent` (`continue_later`). */
    reason: text("reason", { enum: PARK_REASONS }).notNull(),
    state: text("state", { enum: PARK_STATES }).notNull(),
    /** When it was last parked: a park parked again in place (a backoff's next step) moves it, and keeps `since`. */
    parkedAt: integer("parked_at").notNull(),
    /** When it wakes, the session's stagger included (unless its check passes first). */
    wakeAt: integer("wake_at").notNull(),
    /** When the wait it continues began: what a cap of hours on the wait is measured from. */
    since: integer("since").notNull(),
    /** The backoff's step, when no time to wake was known (a limit that named none). */
    backoffMs: integer("backoff_ms"),
    /** The shell check the agent asked to be polled, and how often. */
    checkCommand: text("check_command"),
    checkEveryMs: integer("check_every_ms"),
    checkRuns: integer("check_runs").notNull().default(0),
    nextCheckAt: integer("next_check_at"),
    /** The last lines of the check's last run that did not pass (what a wake at its time says it last printed). */
    checkOutput: text("check_output"),
    endedAt: integer("ended_at"),
    endReason: text("end_reason"),
    owner: text("owner"),
    leaseUntil: integer("lease_until"),
    /** JSON: where the time came from, the agent's reason, the limit's message. */
    detail: text("detail"),
  },
  (t) => [
    check("parks_reason_check", sql`${t.reason} in ('limit', 'opencode_retry', 'agent')`),
    check("parks_state_check", sql`${t.state} in ('parked', 'woke', 'unparked')`),
    // The database itself guarantees at most one parked park per session; it also finds a session's park.
    uniqueIndex("parks_one_parked_per_session")
      .on(t.sessionId)
      .where(sql`state = 'parked'`),
    // Holds only parked rows: every lease tick asks for those due.
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

/** One continuation prompt: written `pending` before the call, `sent`/`failed` after, `unknown` if lost in a crash. */
export const injections = sqliteTable(
  "injections",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    /** Unique: one countdown can never produce two prompts. */
    countdownId: text("countdown_id").notNull(),
    directory: text("directory").notNull(),
    server: text("server"),
    /** The OpenCode message id the prompt was sent with (the enforcer chooses it, so it can find the message later). */
    messageId: text("message_id"),
    createdAt: integer("created_at").notNull(),
    status: text("status", { enum: INJECTION_STATUSES }).notNull(),
    agent: text("agent"),
    /** `provider/model`. */
    model: text("model"),
    variant: text("variant"),
    todosTotal: integer("todos_total").notNull(),
    todosOpen: integer("todos_open").notNull(),
    error: text("error"),
    attempt: integer("attempt").notNull().default(0),
    /** JSON of the session columns this continuation sets once it is known to have gone out (loop counts, ledger). */
    onSent: text("on_sent"),
    owner: text("owner"),
    /** Until when the owner is presumed to be completing the call; reconciliation waits for it. */
    leaseUntil: integer("lease_until"),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    check("injections_status_check", sql`${t.status} in ('pending', 'sent', 'failed', 'unknown')`),
    uniqueIndex("injections_countdown_unique").on(t.countdownId),
    index("injections_session_idx").on(t.sessionId, t.createdAt),
    index("injections_status_idx").on(t.status, t.directory),
    index("injections_created_idx").on(t.createdAt),
  ],
);

export const TURN_OUTCOMES = ["completed", "error", "aborted", "interrupted", "no_turn"] as const;

/**
 * What one continuation cost: the turn it caused, every assistant message answering its message and every step of
 * them. Written once (its first writer wins), when a look after the turn reads the session's messages.
 */
export const continuationBills = sqliteTable(
  "continuation_bills",
  {
    injectionId: text("injection_id").primaryKey(),
    sessionId: text("session_id").notNull(),
    directory: text("directory").notNull(),
    server: text("server"),
    /** The continuation's message id: what the turn's assistant messages name as their `parentID`. */
    messageId: text("message_id").notNull(),
    /** When the continuation was created (`injections.created_at`): the budget window it counts in. */
    continuedAt: integer("continued_at").notNull(),
    /** When the bill was written: the day of the daily cap. */
    recordedAt: integer("recorded_at").notNull(),
    /** `completed`, `error`, `aborted`, `interrupted` (a message never completed), `no_turn` (nothing answered). */
    outcome: text("outcome", { enum: TURN_OUTCOMES }).notNull(),
    error: text("error"),
    finish: text("finish"),
    providerId: text("provider_id"),
    modelId: text("model_id"),
    messages: integer("messages").notNull().default(0),
    steps: integer("steps").notNull().default(0),
    toolCalls: integer("tool_calls").notNull().default(0),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    reasoningTokens: integer("reasoning_tokens").notNull().default(0),
    cacheReadTokens: integer("cache_read_tokens").notNull().default(0),
    cacheWriteTokens: integer("cache_write_tokens").notNull().default(0),
    /** The five kinds together: what `maxContinuationTokens` counts. */
    tokens: integer("tokens").notNull().default(0),
    /** In the currency of the model's configured price (0 without one). */
    cost: real("cost").notNull().default(0),
    /** OpenCode's clock: the turn's first message created, its last completed. */
    startedAt: integer("started_at"),
    endedAt: integer("ended_at"),
    /** Todos closed during the turn, and 1 when it moved the todos forward at all (null: the todos were not read). */
    todosClosed: integer("todos_closed"),
    progressed: integer("progressed"),
    /** Files whose content the turn made new (an undo or a rewrite of the same content is not counted). */
    filesChanged: integer("files_changed"),
    /** The whole session's spend as OpenCode reported it when the bill was written: what the share is taken of. */
    sessionCost: real("session_cost"),
    sessionTokens: integer("session_tokens"),
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

/** Every decision: armed, cancelled, skipped, fired, injected, injection_failed, expired, resumed, reconciled, stopped, unstopped. */
export const auditEvents = sqliteTable(
  "audit_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: integer("at").notNull(),
    sessionId: text("session_id"),
    directory: text("directory"),
    server: text("server"),
    event: text("event").notNull(),
    reason: text("reason"),
    /** JSON text. */
    detail: text("detail"),
  },
  (t) => [
    index("audit_session_idx").on(t.sessionId, t.at),
    index("audit_event_reason_idx").on(t.event, t.reason),
    // No index on `at`: ids grow with time, so retention and "since" queries walk the id order instead.
  ],
);

/**
 * One row per running process that says it is alive: an engine (plugin or service) every third of its lease, and the
 * TUI plugin while it draws the countdown. On PostgreSQL this heartbeat (by the database's clock) is what liveness
 * across hosts rests on; on a machine's own file a live pid says it, and the rows tell operators (`doctor`) and the
 * server side (is a TUI drawing the countdown?) who is there.
 */
export const replicas = sqliteTable("replicas", {
  id: text("id").primaryKey(),
  /** `plugin`, `service` (one server), `fleet` (a replica sharing the `servers` with the others), `tui`, `cli`. */
  kind: text("kind").notNull(),
  host: text("host").notNull(),
  pid: integer("pid").notNull(),
  startedAt: integer("started_at").notNull(),
  heartbeatAt: integer("heartbeat_at").notNull(),
  leaseMs: integer("lease_ms").notNull(),
  version: text("version"),
  /** The project folder it works for, when it has one: a TUI draws the countdowns of this folder's sessions. */
  directory: text("directory"),
});

export { NOTICE_STATES, notices, type NoticeState } from "./notices/table.js";
export { VERIFICATION_STATES, verifications, type VerificationState } from "./verifications/table.js";

export const schema = {
  sessions,
  countdowns,
  parks,
  verifications,
  injections,
  auditEvents,
  replicas,
  continuationBills,
  notices,
};
export type Schema = typeof schema;
export type SessionRow = typeof sessions.$inferSelect;
export type CountdownRow = typeof countdowns.$inferSelect;
export type ParkRow = typeof parks.$inferSelect;
export type VerificationRow = typeof verifications.$inferSelect;
export type InjectionRow = typeof injections.$inferSelect;
export type AuditRow = typeof auditEvents.$inferSelect;
export type BillRow = typeof continuationBills.$inferSelect;
export type NewBill = typeof continuationBills.$inferInsert;
export type NoticeRow = typeof notices.$inferSelect;

// The views users' SQL reads (created by a migration), declared beside the tables for drizzle-kit.
export * from "./sqlite/views.js";
