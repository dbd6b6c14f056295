ALTER TABLE "parks" ADD COLUMN "check_output" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "wake_note" text;--> statement-breakpoint
CREATE INDEX "parks_session_idx" ON "parks" USING btree ("session_id","parked_at");