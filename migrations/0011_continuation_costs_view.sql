CREATE VIEW `continuation_costs` AS SELECT date(recorded_at / 1000, 'unixepoch') AS day, session_id, model_id, count(*) AS continuations,
    sum(tokens) AS tokens, sum(cost) AS cost, coalesce(sum(todos_closed), 0) AS todos_closed
  FROM continuation_bills GROUP BY day, session_id, model_id;