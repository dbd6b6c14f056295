ALTER TABLE `injections` ADD `on_sent` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `last_error_retry_after_ms` integer;--> statement-breakpoint
ALTER TABLE `sessions` ADD `error_streak` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `unproductive_replies` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `paused_at` integer;--> statement-breakpoint
ALTER TABLE `sessions` ADD `pause_message_id` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `pause_baseline` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `recheck_at` integer;