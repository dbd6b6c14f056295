DROP INDEX `audit_at_idx`;--> statement-breakpoint
DROP INDEX `countdowns_due_idx`;--> statement-breakpoint
DROP INDEX `countdowns_session_idx`;--> statement-breakpoint
DROP INDEX `countdowns_ended_idx`;