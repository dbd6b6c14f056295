// The views for users' SQL on SQLite (see README "Query it yourself"): what the audit log, the continuations and their
// bills say, readable without joins. Created by a migration; they must run on the sqlite3 3.40 CLI.
import { sql } from "drizzle-orm";
import { integer, real, sqliteView, text } from "drizzle-orm/sqlite-core";

/** One row per continuation prompt, with its countdown and how late it went out. */
export const injectionHistory = sqliteView("injection_history", {
  injectionId: text("injection_id").notNull(),
  sessionId: text("session_id").notNull(),
  directory: text("directory").notNull(),
  server: text("server"),
  createdAt: integer("created_at").notNull(),
  createdLocal: text("created_local").notNull(),
  status: text("status").notNull(),
  agent: text("agent"),
  model: text("model"),
  variant: text("variant"),
  todosOpen: integer("todos_open").notNull(),
  todosTotal: integer("todos_total").notNull(),
  attempt: integer("attempt").notNull(),
  error: text("error"),
  messageId: text("message_id"),
  countdownId: text("countdown_id").notNull(),
  armedAt: integer("armed_at"),
  deadlineAt: integer("deadline_at"),
  lateMs: integer("late_ms"),
}).as(
  sql`SELECT i.id AS injection_id, i.session_id, i.directory, i.server, i.created_at,
    datetime(i.created_at / 1000, 'unixepoch', 'localtime') AS created_local,
    i.status, i.agent, i.model, i.variant, i.todos_open, i.todos_total, i.attempt, i.error, i.message_id,
    i.countdown_id, c.armed_at, c.deadline_at, i.created_at - c.deadline_at AS late_ms
  FROM injections i LEFT JOIN countdowns c ON c.id = i.countdown_id`,
);

/** Why the enforcer did not continue: every skip reason with its count. */
export const skipReasons = sqliteView("skip_reasons", {
  reason: text("reason"),
  skips: integer("skips").notNull(),
  sessions: integer("sessions").notNull(),
  firstAt: integer("first_at").notNull(),
  lastAt: integer("last_at").notNull(),
  lastLocal: text("last_local").notNull(),
}).as(
  sql`SELECT reason, count(*) AS skips, count(DISTINCT session_id) AS sessions, min(at) AS first_at, max(at) AS last_at,
    datetime(max(at) / 1000, 'unixepoch', 'localtime') AS last_local
  FROM audit_events WHERE event = 'skipped' GROUP BY reason`,
);

/** What continuations cost, per UTC day, session and model: the bill in one line each. */
export const continuationCosts = sqliteView("continuation_costs", {
  day: text("day").notNull(),
  sessionId: text("session_id").notNull(),
  modelId: text("model_id"),
  continuations: integer("continuations").notNull(),
  tokens: integer("tokens").notNull(),
  cost: real("cost").notNull(),
  todosClosed: integer("todos_closed").notNull(),
  filesChanged: integer("files_changed").notNull(),
  sessionCost: real("session_cost"),
}).as(
  sql`SELECT date(recorded_at / 1000, 'unixepoch') AS day, session_id, model_id, count(*) AS continuations,
    sum(tokens) AS tokens, sum(cost) AS cost, coalesce(sum(todos_closed), 0) AS todos_closed,
    coalesce(sum(files_changed), 0) AS files_changed, max(session_cost) AS session_cost
  FROM continuation_bills GROUP BY day, session_id, model_id`,
);

/** Countdowns armed right now, with their owner, lease and time left. */
export const armedCountdowns = sqliteView("armed_countdowns", {
  countdownId: text("countdown_id").notNull(),
  sessionId: text("session_id").notNull(),
  directory: text("directory").notNull(),
  server: text("server"),
  armedAt: integer("armed_at").notNull(),
  deadlineAt: integer("deadline_at").notNull(),
  owner: text("owner"),
  leaseUntil: integer("lease_until"),
  attempt: integer("attempt").notNull(),
  todosOpen: integer("todos_open"),
  todosTotal: integer("todos_total"),
  secondsLeft: real("seconds_left").notNull(),
}).as(
  sql`SELECT id AS countdown_id, session_id, directory, server, armed_at, deadline_at, owner, lease_until, attempt, todos_open, todos_total,
    (deadline_at - CAST(strftime('%s', 'now') AS INTEGER) * 1000) / 1000.0 AS seconds_left
  FROM countdowns WHERE state = 'armed'`,
);

/** The audit trail with readable times. */
export const decisions = sqliteView("decisions", {
  id: integer("id").notNull(),
  at: integer("at").notNull(),
  atLocal: text("at_local").notNull(),
  sessionId: text("session_id"),
  directory: text("directory"),
  server: text("server"),
  event: text("event").notNull(),
  reason: text("reason"),
  detail: text("detail"),
}).as(
  sql`SELECT id, at, datetime(at / 1000, 'unixepoch', 'localtime') AS at_local, session_id, directory, server, event, reason, detail
  FROM audit_events`,
);
