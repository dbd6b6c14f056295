ALTER TABLE `sessions` ADD `wake_note` text;--> statement-breakpoint
CREATE INDEX `parks_session_idx` ON `parks` (`session_id`,`parked_at`);