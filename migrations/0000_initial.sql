CREATE TABLE `audit_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`session_id` text,
	`directory` text,
	`event` text NOT NULL,
	`reason` text,
	`detail` text
);
--> statement-breakpoint
CREATE INDEX `audit_session_idx` ON `audit_events` (`session_id`,`at`);--> statement-breakpoint
CREATE INDEX `audit_event_reason_idx` ON `audit_events` (`event`,`reason`);--> statement-breakpoint
CREATE INDEX `audit_at_idx` ON `audit_events` (`at`);--> statement-breakpoint
CREATE TABLE `countdowns` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`directory` text NOT NULL,
	`armed_at` integer NOT NULL,
	`deadline_at` integer NOT NULL,
	`state` text NOT NULL,
	`ended_at` integer,
	`end_reason` text,
	`owner` text,
	`lease_until` integer,
	`attempt` integer DEFAULT 0 NOT NULL,
	`todos_open` integer,
	`todos_total` integer,
	CONSTRAINT "countdowns_state_check" CHECK("countdowns"."state" in ('armed', 'fired', 'cancelled', 'expired'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `countdowns_one_armed_per_session` ON `countdowns` (`session_id`) WHERE state = 'armed';--> statement-breakpoint
CREATE INDEX `countdowns_due_idx` ON `countdowns` (`state`,`directory`,`deadline_at`);--> statement-breakpoint
CREATE INDEX `countdowns_session_idx` ON `countdowns` (`session_id`,`armed_at`);--> statement-breakpoint
CREATE INDEX `countdowns_ended_idx` ON `countdowns` (`ended_at`);--> statement-breakpoint
CREATE TABLE `injections` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`countdown_id` text NOT NULL,
	`directory` text NOT NULL,
	`message_id` text,
	`created_at` integer NOT NULL,
	`status` text NOT NULL,
	`agent` text,
	`model` text,
	`variant` text,
	`todos_total` integer NOT NULL,
	`todos_open` integer NOT NULL,
	`error` text,
	`attempt` integer DEFAULT 0 NOT NULL,
	`owner` text,
	`lease_until` integer,
	`updated_at` integer NOT NULL,
	CONSTRAINT "injections_status_check" CHECK("injections"."status" in ('pending', 'sent', 'failed', 'unknown'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `injections_countdown_unique` ON `injections` (`countdown_id`);--> statement-breakpoint
CREATE INDEX `injections_session_idx` ON `injections` (`session_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `injections_status_idx` ON `injections` (`status`,`directory`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`session_id` text PRIMARY KEY NOT NULL,
	`directory` text NOT NULL,
	`project_id` text,
	`parent_id` text,
	`stopped_at` integer,
	`stop_source` text,
	`recovering_since` integer,
	`last_error_at` integer,
	`last_error_name` text,
	`last_error_kind` text,
	`aborted_at` integer,
	`token_limit_at` integer,
	`continuations` integer DEFAULT 0 NOT NULL,
	`stagnant_continuations` integer DEFAULT 0 NOT NULL,
	`todo_snapshot` text,
	`consecutive_failures` integer DEFAULT 0 NOT NULL,
	`backoff_until` integer,
	`last_user_message_at` integer,
	`agent` text,
	`model_provider` text,
	`model_id` text,
	`variant` text,
	`deleted_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sessions_directory_idx` ON `sessions` (`directory`);--> statement-breakpoint
CREATE INDEX `sessions_stopped_idx` ON `sessions` (`stopped_at`);