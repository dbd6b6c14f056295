CREATE TABLE "notices" (
	"id" text PRIMARY KEY NOT NULL,
	"notice_id" text NOT NULL,
	"session_id" text NOT NULL,
	"directory" text NOT NULL,
	"server" text,
	"channel" text NOT NULL,
	"kind" text NOT NULL,
	"reason" text NOT NULL,
	"created_at" bigint NOT NULL,
	"body" text NOT NULL,
	"state" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" bigint NOT NULL,
	"owner" text,
	"lease_until" bigint,
	"sent_at" bigint,
	"last_error" text,
	"folded_into" text,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "notices_state_check" CHECK ("notices"."state" in ('pending', 'sent', 'failed', 'folded'))
);
--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "allowed_continuations" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "allowed_cost" double precision DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "allowed_tokens" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "notices_due_idx" ON "notices" USING btree ("next_attempt_at") WHERE state = 'pending';