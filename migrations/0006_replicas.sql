CREATE TABLE `replicas` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`host` text NOT NULL,
	`pid` integer NOT NULL,
	`started_at` integer NOT NULL,
	`heartbeat_at` integer NOT NULL,
	`lease_ms` integer NOT NULL,
	`version` text
);
