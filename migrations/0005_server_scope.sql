ALTER TABLE `audit_events` ADD `server` text;--> statement-breakpoint
ALTER TABLE `countdowns` ADD `server` text;--> statement-breakpoint
ALTER TABLE `injections` ADD `server` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `server` text;--> statement-breakpoint
DROP VIEW `armed_countdowns`;--> statement-breakpoint
DROP VIEW `decisions`;--> statement-breakpoint
DROP VIEW `injection_history`;--> statement-breakpoint
CREATE VIEW `armed_countdowns` AS SELECT id AS countdown_id, session_id, directory, server, armed_at, deadline_at, owner, lease_until, attempt, todos_open, todos_total,
    (deadline_at - CAST(strftime('%s', 'now') AS INTEGER) * 1000) / 1000.0 AS seconds_left
  FROM countdowns WHERE state = 'armed';--> statement-breakpoint
CREATE VIEW `decisions` AS SELECT id, at, datetime(at / 1000, 'unixepoch', 'localtime') AS at_local, session_id, directory, server, event, reason, detail
  FROM audit_events;--> statement-breakpoint
CREATE VIEW `injection_history` AS SELECT i.id AS injection_id, i.session_id, i.directory, i.server, i.created_at,
    datetime(i.created_at / 1000, 'unixepoch', 'localtime') AS created_local,
    i.status, i.agent, i.model, i.variant, i.todos_open, i.todos_total, i.attempt, i.error, i.message_id,
    i.countdown_id, c.armed_at, c.deadline_at, i.created_at - c.deadline_at AS late_ms
  FROM injections i LEFT JOIN countdowns c ON c.id = i.countdown_id;