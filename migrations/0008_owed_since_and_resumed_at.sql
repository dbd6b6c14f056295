ALTER TABLE `sessions` ADD `owed_since` integer;--> statement-breakpoint
ALTER TABLE `sessions` ADD `resumed_at` integer;