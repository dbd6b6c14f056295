ALTER TABLE `sessions` ADD `work_continuations` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `file_ledger` text;