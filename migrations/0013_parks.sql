CREATE TABLE `parks` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`directory` text NOT NULL,
	`server` text,
	`reason` text NOT NULL,
	`state` text NOT NULL,
	`parked_at` integer NOT NULL,
	`wake_at` integer NOT NULL,
	`since` integer NOT NULL,
	`backoff_ms` integer,
	`check_command` text,
	`check_every_ms` integer,
	`check_runs` integer DEFAULT 0 NOT NULL,
	`next_check_at` integer,
	`ended_at` integer,
	`end_reason` text,
	`owner` text,
	`lease_until` integer,
	`detail` text,
	CONSTRAINT "parks_reason_check" CHECK("parks"."reason" in ('limit', 'opencode_retry', 'agent')),
	CONSTRAINT "parks_state_check" CHECK("parks"."state" in ('parked', 'woke', 'unparked'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `parks_one_parked_per_session` ON `parks` (`session_id`) WHERE state = 'parked';--> statement-breakpoint
CREATE INDEX `parks_due_idx` ON `parks` (`wake_at`) WHERE state = 'parked';