DROP INDEX "parks_check_due_idx";--> statement-breakpoint
DROP INDEX "sessions_stopped_idx";--> statement-breakpoint
CREATE INDEX "parks_check_due_idx" ON "parks" USING btree ("next_check_at") WHERE state = 'parked' AND next_check_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX "sessions_stopped_idx" ON "sessions" USING btree ("stopped_at") WHERE stopped_at IS NOT NULL;