CREATE TABLE `verifications` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`directory` text NOT NULL,
	`server` text,
	`command` text NOT NULL,
	`state` text NOT NULL,
	`after_continuations` integer NOT NULL,
	`started_at` integer NOT NULL,
	`ended_at` integer,
	`exit_code` integer,
	`duration_ms` integer,
	`output_tail` text,
	`output_hash` text,
	`ledger_hash` text,
	`failures` integer DEFAULT 0 NOT NULL,
	`repeated` integer DEFAULT false NOT NULL,
	`owner` text,
	`lease_until` integer,
	CONSTRAINT "verifications_state_check" CHECK("verifications"."state" in ('running', 'passed', 'failed', 'cancelled', 'interrupted'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `verifications_one_running_per_session` ON `verifications` (`session_id`) WHERE state = 'running';--> statement-breakpoint
CREATE INDEX `verifications_session_idx` ON `verifications` (`session_id`,`started_at`);