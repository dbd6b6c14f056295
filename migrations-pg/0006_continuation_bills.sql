CREATE TABLE "continuation_bills" (
	"injection_id" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"directory" text NOT NULL,
	"server" text,
	"message_id" text NOT NULL,
	"continued_at" bigint NOT NULL,
	"recorded_at" bigint NOT NULL,
	"outcome" text NOT NULL,
	"error" text,
	"finish" text,
	"provider_id" text,
	"model_id" text,
	"messages" integer DEFAULT 0 NOT NULL,
	"steps" integer DEFAULT 0 NOT NULL,
	"tool_calls" integer DEFAULT 0 NOT NULL,
	"input_tokens" bigint DEFAULT 0 NOT NULL,
	"output_tokens" bigint DEFAULT 0 NOT NULL,
	"reasoning_tokens" bigint DEFAULT 0 NOT NULL,
	"cache_read_tokens" bigint DEFAULT 0 NOT NULL,
	"cache_write_tokens" bigint DEFAULT 0 NOT NULL,
	"tokens" bigint DEFAULT 0 NOT NULL,
	"cost" double precision DEFAULT 0 NOT NULL,
	"started_at" bigint,
	"ended_at" bigint,
	"todos_closed" integer,
	"progressed" integer,
	"files_changed" integer,
	"session_cost" double precision,
	"session_tokens" bigint,
	"db_recorded_at" bigint DEFAULT (extract(epoch from clock_timestamp()) * 1000)::bigint,
	CONSTRAINT "continuation_bills_outcome_check" CHECK ("continuation_bills"."outcome" in ('completed', 'error', 'aborted', 'interrupted', 'no_turn'))
);
--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "continuation_cost" double precision DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "continuation_tokens" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "continuation_bills_session_idx" ON "continuation_bills" USING btree ("session_id","continued_at");--> statement-breakpoint
CREATE INDEX "continuation_bills_recorded_idx" ON "continuation_bills" USING btree ("recorded_at");--> statement-breakpoint
CREATE VIEW "public"."continuation_costs" AS (SELECT to_char(to_timestamp(recorded_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, session_id,
    model_id, count(*) AS continuations, sum(tokens)::bigint AS tokens, sum(cost) AS cost,
    coalesce(sum(todos_closed), 0)::bigint AS todos_closed, coalesce(sum(files_changed), 0)::bigint AS files_changed,
    max(session_cost) AS session_cost
  FROM continuation_bills GROUP BY 1, session_id, model_id);