ALTER TABLE "sessions" ADD COLUMN "owed_since" bigint;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "resumed_at" bigint;