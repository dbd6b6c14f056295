CREATE TABLE "parks" (
	"id" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"directory" text NOT NULL,
	"server" text,
	"reason" text NOT NULL,
	"state" text NOT NULL,
	"parked_at" bigint NOT NULL,
	"wake_at" bigint NOT NULL,
	"since" bigint NOT NULL,
	"backoff_ms" bigint,
	"check_command" text,
	"check_every_ms" bigint,
	"check_runs" integer DEFAULT 0 NOT NULL,
	"next_check_at" bigint,
	"ended_at" bigint,
	"end_reason" text,
	"owner" text,
	"lease_until" bigint,
	"detail" text,
	CONSTRAINT "parks_reason_check" CHECK ("parks"."reason" in ('limit', 'opencode_retry', 'agent')),
	CONSTRAINT "parks_state_check" CHECK ("parks"."state" in ('parked', 'woke', 'unparked'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "parks_one_parked_per_session" ON "parks" USING btree ("session_id") WHERE state = 'parked';--> statement-breakpoint
CREATE INDEX "parks_due_idx" ON "parks" USING btree ("wake_at") WHERE state = 'parked';