CREATE TABLE `continuation_bills` (
	`injection_id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`directory` text NOT NULL,
	`server` text,
	`message_id` text NOT NULL,
	`continued_at` integer NOT NULL,
	`recorded_at` integer NOT NULL,
	`outcome` text NOT NULL,
	`error` text,
	`finish` text,
	`provider_id` text,
	`model_id` text,
	`messages` integer DEFAULT 0 NOT NULL,
	`steps` integer DEFAULT 0 NOT NULL,
	`tool_calls` integer DEFAULT 0 NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`reasoning_tokens` integer DEFAULT 0 NOT NULL,
	`cache_read_tokens` integer DEFAULT 0 NOT NULL,
	`cache_write_tokens` integer DEFAULT 0 NOT NULL,
	`tokens` integer DEFAULT 0 NOT NULL,
	`cost` real DEFAULT 0 NOT NULL,
	`started_at` integer,
	`ended_at` integer,
	`todos_closed` integer,
	`progressed` integer,
	`files_changed` integer,
	`session_cost` real,
	`session_tokens` integer,
	CONSTRAINT "continuation_bills_outcome_check" CHECK("continuation_bills"."outcome" in ('completed', 'error', 'aborted', 'interrupted', 'no_turn'))
);
--> statement-breakpoint
CREATE INDEX `continuation_bills_session_idx` ON `continuation_bills` (`session_id`,`continued_at`);--> statement-breakpoint
CREATE INDEX `continuation_bills_recorded_idx` ON `continuation_bills` (`recorded_at`);--> statement-breakpoint
ALTER TABLE `sessions` ADD `continuation_cost` real DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `continuation_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE VIEW `continuation_costs` AS SELECT date(recorded_at / 1000, 'unixepoch') AS day, session_id, model_id, count(*) AS continuations,
    sum(tokens) AS tokens, sum(cost) AS cost, coalesce(sum(todos_closed), 0) AS todos_closed,
    coalesce(sum(files_changed), 0) AS files_changed, max(session_cost) AS session_cost
  FROM continuation_bills GROUP BY day, session_id, model_id;