CREATE VIEW "public"."continuation_costs" AS (SELECT to_char(to_timestamp(recorded_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, session_id,
    model_id, count(*) AS continuations, sum(tokens)::bigint AS tokens, sum(cost) AS cost,
    coalesce(sum(todos_closed), 0)::bigint AS todos_closed
  FROM continuation_bills GROUP BY 1, session_id, model_id);