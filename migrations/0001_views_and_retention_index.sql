CREATE INDEX `injections_created_idx` ON `injections` (`created_at`);--> statement-breakpoint
CREATE VIEW `armed_countdowns` AS SELECT id AS countdown_id, session_id, directory, armed_at, deadline_at, owner, lease_until, attempt, todos_open, todos_total,
    (deadline_at - CAST(strftime('%s', 'now') AS INTEGER) * 1000) / 1000.0 AS seconds_left
  FROM countdowns WHERE state = 'armed';--> statement-breakpoint
CREATE VIEW `decisions` AS SELECT id, at, datetime(at / 1000, 'unixepoch', 'localtime') AS at_local, session_id, directory, event, reason, detail
  FROM audit_events;--> statement-breakpoint
CREATE VIEW `injection_history` AS SELECT i.id AS injection_id, i.session_id, i.directory, i.created_at,
    datetime(i.created_at / 1000, 'unixepoch', 'localtime') AS created_local,
    i.status, i.agent, i.model, i.variant, i.todos_open, i.todos_total, i.attempt, i.error, i.message_id,
    i.countdown_id, c.armed_at, c.deadline_at, i.created_at - c.deadline_at AS late_ms
  FROM injections i LEFT JOIN countdowns c ON c.id = i.countdown_id;--> statement-breakpoint
CREATE VIEW `skip_reasons` AS SELECT reason, count(*) AS skips, count(DISTINCT session_id) AS sessions, min(at) AS first_at, max(at) AS last_at,
    datetime(max(at) / 1000, 'unixepoch', 'localtime') AS last_local
  FROM audit_events WHERE event = 'skipped' GROUP BY reason;