ALTER TABLE "sessions" ADD COLUMN "work_continuations" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "file_ledger" text;