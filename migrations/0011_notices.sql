CREATE TABLE `notices` (
	`id` text PRIMARY KEY NOT NULL,
	`notice_id` text NOT NULL,
	`session_id` text NOT NULL,
	`directory` text NOT NULL,
	`server` text,
	`channel` text NOT NULL,
	`kind` text NOT NULL,
	`reason` text NOT NULL,
	`created_at` integer NOT NULL,
	`body` text NOT NULL,
	`state` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`owner` text,
	`lease_until` integer,
	`sent_at` integer,
	`last_error` text,
	`folded_into` text,
	`updated_at` integer NOT NULL,
	CONSTRAINT "notices_state_check" CHECK("notices"."state" in ('pending', 'sent', 'failed', 'folded'))
);
--> statement-breakpoint
CREATE INDEX `notices_due_idx` ON `notices` (`next_attempt_at`) WHERE state = 'pending';--> statement-breakpoint
ALTER TABLE `sessions` ADD `allowed_continuations` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `allowed_cost` real DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `allowed_tokens` integer DEFAULT 0 NOT NULL;