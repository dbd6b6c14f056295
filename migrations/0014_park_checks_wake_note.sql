ALTER TABLE `parks` ADD `check_output` text;--> statement-breakpoint
CREATE INDEX `parks_session_idx` ON `parks` (`session_id`,`parked_at`);--> statement-breakpoint
ALTER TABLE `sessions` ADD `wake_note` text;