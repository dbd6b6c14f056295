CREATE TABLE "audit_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" bigint NOT NULL,
	"session_id" text,
	"directory" text,
	"server" text,
	"event" text NOT NULL,
	"reason" text,
	"detail" text
);
--> statement-breakpoint
CREATE TABLE "countdowns" (
	"id" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"directory" text NOT NULL,
	"server" text,
	"armed_at" bigint NOT NULL,
	"deadline_at" bigint NOT NULL,
	"state" text NOT NULL,
	"ended_at" bigint,
	"end_reason" text,
	"owner" text,
	"lease_until" bigint,
	"attempt" integer DEFAULT 0 NOT NULL,
	"todos_open" integer,
	"todos_total" integer,
	CONSTRAINT "countdowns_state_check" CHECK ("countdowns"."state" in ('armed', 'fired', 'cancelled', 'expired'))
);
--> statement-breakpoint
CREATE TABLE "injections" (
	"id" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"countdown_id" text NOT NULL,
	"directory" text NOT NULL,
	"server" text,
	"message_id" text,
	"created_at" bigint NOT NULL,
	"status" text NOT NULL,
	"agent" text,
	"model" text,
	"variant" text,
	"todos_total" integer NOT NULL,
	"todos_open" integer NOT NULL,
	"error" text,
	"attempt" integer DEFAULT 0 NOT NULL,
	"on_sent" text,
	"owner" text,
	"lease_until" bigint,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "injections_status_check" CHECK ("injections"."status" in ('pending', 'sent', 'failed', 'unknown'))
);
--> statement-breakpoint
CREATE TABLE "replicas" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"host" text NOT NULL,
	"pid" integer NOT NULL,
	"started_at" bigint NOT NULL,
	"heartbeat_at" bigint NOT NULL,
	"lease_ms" integer NOT NULL,
	"version" text
);
--> statement-breakpoint
CREATE TABLE "servers" (
	"name" text PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"directory" text NOT NULL,
	"username" text,
	"password_env" text,
	"added_at" bigint NOT NULL,
	"owner" text,
	"owned_since" bigint,
	"seen_until" bigint
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"session_id" text PRIMARY KEY NOT NULL,
	"directory" text NOT NULL,
	"server" text,
	"project_id" text,
	"parent_id" text,
	"stopped_at" bigint,
	"stop_source" text,
	"recovering_since" bigint,
	"last_error_at" bigint,
	"last_error_name" text,
	"last_error_kind" text,
	"last_error_retry_after_ms" bigint,
	"error_streak" integer DEFAULT 0 NOT NULL,
	"aborted_at" bigint,
	"token_limit_at" bigint,
	"continuations" integer DEFAULT 0 NOT NULL,
	"stagnant_continuations" integer DEFAULT 0 NOT NULL,
	"unproductive_replies" integer DEFAULT 0 NOT NULL,
	"todo_snapshot" text,
	"consecutive_failures" integer DEFAULT 0 NOT NULL,
	"backoff_until" bigint,
	"last_user_message_at" bigint,
	"paused_at" bigint,
	"pause_message_id" text,
	"pause_baseline" text,
	"recheck_at" bigint,
	"notified_stop" text,
	"agent" text,
	"model_provider" text,
	"model_id" text,
	"variant" text,
	"deleted_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "audit_session_idx" ON "audit_events" USING btree ("session_id","at");--> statement-breakpoint
CREATE INDEX "audit_event_reason_idx" ON "audit_events" USING btree ("event","reason");--> statement-breakpoint
CREATE UNIQUE INDEX "countdowns_one_armed_per_session" ON "countdowns" USING btree ("session_id") WHERE state = 'armed';--> statement-breakpoint
CREATE UNIQUE INDEX "injections_countdown_unique" ON "injections" USING btree ("countdown_id");--> statement-breakpoint
CREATE INDEX "injections_session_idx" ON "injections" USING btree ("session_id","created_at");--> statement-breakpoint
CREATE INDEX "injections_status_idx" ON "injections" USING btree ("status","directory");--> statement-breakpoint
CREATE INDEX "injections_created_idx" ON "injections" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "sessions_directory_idx" ON "sessions" USING btree ("directory");--> statement-breakpoint
CREATE INDEX "sessions_stopped_idx" ON "sessions" USING btree ("stopped_at");--> statement-breakpoint
CREATE VIEW "public"."armed_countdowns" AS (SELECT id AS countdown_id, session_id, directory, server, armed_at, deadline_at, owner, lease_until, attempt, todos_open, todos_total,
    (deadline_at - (extract(epoch from clock_timestamp()) * 1000)::bigint) / 1000.0 AS seconds_left
  FROM countdowns WHERE state = 'armed');--> statement-breakpoint
CREATE VIEW "public"."decisions" AS (SELECT id, at, to_char(to_timestamp(at / 1000.0), 'YYYY-MM-DD HH24:MI:SS') AS at_local, session_id, directory, server, event, reason, detail
  FROM audit_events);--> statement-breakpoint
CREATE VIEW "public"."injection_history" AS (SELECT i.id AS injection_id, i.session_id, i.directory, i.server, i.created_at,
    to_char(to_timestamp(i.created_at / 1000.0), 'YYYY-MM-DD HH24:MI:SS') AS created_local,
    i.status, i.agent, i.model, i.variant, i.todos_open, i.todos_total, i.attempt, i.error, i.message_id,
    i.countdown_id, c.armed_at, c.deadline_at, i.created_at - c.deadline_at AS late_ms
  FROM injections i LEFT JOIN countdowns c ON c.id = i.countdown_id);--> statement-breakpoint
CREATE VIEW "public"."skip_reasons" AS (SELECT reason, count(*) AS skips, count(DISTINCT session_id) AS sessions, min(at) AS first_at, max(at) AS last_at,
    to_char(to_timestamp(max(at) / 1000.0), 'YYYY-MM-DD HH24:MI:SS') AS last_local
  FROM audit_events WHERE event = 'skipped' GROUP BY reason);