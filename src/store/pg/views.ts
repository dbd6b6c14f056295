// The views for users' SQL on PostgreSQL: the same as on SQLite (../sqlite/views.ts), in PostgreSQL's dialect.
import { sql } from "drizzle-orm";
import { doublePrecision, integer, pgView, text } from "drizzle-orm/pg-core";
import { ms } from "./epoch-ms.js";
import { DB_NOW_MS } from "./rows.js";

/** Epoch milliseconds as local time text, like SQLite's datetime(…, 'localtime'). */
const local = (column: string) => `to_char(to_timestamp(${column} / 1000.0), 'YYYY-MM-DD HH24:MI:SS')`;

export const injectionHistory = pgView("injection_history", {
  injectionId: text("injection_id").notNull(),
  sessionId: text("session_id").notNull(),
  directory: text("directory").notNull(),
  server: text("server"),
  createdAt: ms("created_at").notNull(),
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
  armedAt: ms("armed_at"),
  deadlineAt: ms("deadline_at"),
  lateMs: ms("late_ms"),
}).as(
  sql.raw(`SELECT i.id AS injection_id, i.session_id, i.directory, i.server, i.created_at,
    ${local("i.created_at")} AS created_local,
    i.status, i.agent, i.model, i.variant, i.todos_open, i.todos_total, i.attempt, i.error, i.message_id,
    i.countdown_id, c.armed_at, c.deadline_at, i.created_at - c.deadline_at AS late_ms
  FROM injections i LEFT JOIN countdowns c ON c.id = i.countdown_id`),
);

export const skipReasons = pgView("skip_reasons", {
  reason: text("reason"),
  skips: ms("skips").notNull(),
  sessions: ms("sessions").notNull(),
  firstAt: ms("first_at").notNull(),
  lastAt: ms("last_at").notNull(),
  lastLocal: text("last_local").notNull(),
}).as(
  sql.raw(`SELECT reason, count(*) AS skips, count(DISTINCT session_id) AS sessions, min(at) AS first_at, max(at) AS last_at,
    ${local("max(at)")} AS last_local
  FROM audit_events WHERE event = 'skipped' GROUP BY reason`),
);

export const continuationCosts = pgView("continuation_costs", {
  day: text("day").notNull(),
  sessionId: text("session_id").notNull(),
  modelId: text("model_id"),
  continuations: ms("continuations").notNull(),
  tokens: ms("tokens").notNull(),
  cost: doublePrecision("cost").notNull(),
  todosClosed: ms("todos_closed").notNull(),
  filesChanged: ms("files_changed").notNull(),
  sessionCost: doublePrecision("session_cost"),
}).as(
  sql.raw(`SELECT to_char(to_timestamp(recorded_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, session_id,
    model_id, count(*) AS continuations, sum(tokens)::bigint AS tokens, sum(cost) AS cost,
    coalesce(sum(todos_closed), 0)::bigint AS todos_closed, coalesce(sum(files_changed), 0)::bigint AS files_changed,
    max(session_cost) AS session_cost
  FROM continuation_bills GROUP BY 1, session_id, model_id`),
);

export const armedCountdowns = pgView("armed_countdowns", {
  countdownId: text("countdown_id").notNull(),
  sessionId: text("session_id").notNull(),
  directory: text("directory").notNull(),
  server: text("server"),
  armedAt: ms("armed_at").notNull(),
  deadlineAt: ms("deadline_at").notNull(),
  owner: text("owner"),
  leaseUntil: ms("lease_until"),
  attempt: integer("attempt").notNull(),
  todosOpen: integer("todos_open"),
  todosTotal: integer("todos_total"),
  secondsLeft: doublePrecision("seconds_left").notNull(),
}).as(
  sql.raw(`SELECT id AS countdown_id, session_id, directory, server, armed_at, deadline_at, owner, lease_until, attempt, todos_open, todos_total,
    (deadline_at - ${DB_NOW_MS}) / 1000.0 AS seconds_left
  FROM countdowns WHERE state = 'armed'`),
);

export const decisions = pgView("decisions", {
  id: ms("id").notNull(),
  at: ms("at").notNull(),
  atLocal: text("at_local").notNull(),
  sessionId: text("session_id"),
  directory: text("directory"),
  server: text("server"),
  event: text("event").notNull(),
  reason: text("reason"),
  detail: text("detail"),
}).as(
  sql.raw(`SELECT id, at, ${local("at")} AS at_local, session_id, directory, server, event, reason, detail
  FROM audit_events`),
);
