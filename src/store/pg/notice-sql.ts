// The notices outbox's statements on PostgreSQL (what each means: ../statements.ts). A notice's lease is the database's
// clock, as a countdown's liveness is: replicas' clocks disagree, and two of them must never both take one notice.
import { statement } from "./prepared.js";
import { DB_NOW_MS } from "./rows.js";
import { notices } from "./schema.js";
import { selectList } from "./statement-sql.js";

const NOTICE = selectList(notices);

export const N = {
  insertNotices: statement(
    "insert_notices",
    `INSERT INTO notices (id, notice_id, session_id, directory, server, channel, kind, reason, created_at, body, state,
                          attempts, next_attempt_at, updated_at)
     SELECT n.id, n."noticeId", n."sessionId", n.directory, n.server, n.channel, n.kind, n.reason, n."createdAt",
            n.body, 'pending', 0, n."createdAt", n."createdAt"
     FROM jsonb_to_recordset($1::text::jsonb) AS n(id text, "noticeId" text, "sessionId" text, directory text,
       server text, channel text, kind text, reason text, "createdAt" bigint, body text)
     ON CONFLICT DO NOTHING`,
  ),
  // Rows another replica is taking right now are skipped, not waited for.
  claimNotices: statement(
    "claim_notices",
    `WITH free AS (
       SELECT id FROM notices
       WHERE state = 'pending' AND directory = $1 AND server IS NOT DISTINCT FROM $2
         AND channel IN (SELECT jsonb_array_elements_text($3::text::jsonb))
         AND next_attempt_at <= $4 AND (owner IS NULL OR lease_until IS NULL OR lease_until < ${DB_NOW_MS})
       ORDER BY next_attempt_at LIMIT $7
       FOR UPDATE SKIP LOCKED)
     UPDATE notices SET owner = $5, lease_until = ${DB_NOW_MS} + $6::bigint FROM free WHERE notices.id = free.id
     RETURNING ${NOTICE.replaceAll(/(^|, )([a-z_]+)/g, "$1notices.$2")}`,
  ),
  settleNotice: statement(
    "settle_notice",
    `UPDATE notices SET state = $3, attempts = $4, next_attempt_at = $5, sent_at = $6, last_error = $7, body = $8,
       updated_at = $9, owner = NULL, lease_until = NULL
     WHERE id = $1 AND owner = $2 AND state = 'pending' RETURNING id`,
  ),
  pendingNoticesOf: statement(
    "pending_notices_of",
    `SELECT ${NOTICE} FROM notices WHERE session_id = $1 AND channel = $2 AND state = 'pending' ORDER BY created_at, id`,
  ),
  foldNotices: statement(
    "fold_notices",
    `WITH folded AS (
       UPDATE notices SET state = 'folded', folded_into = $2, updated_at = $3, owner = NULL, lease_until = NULL
       WHERE state = 'pending' AND id IN (SELECT jsonb_array_elements_text($1::text::jsonb)) RETURNING 1)
     SELECT count(*)::int AS n FROM folded`,
  ),
  noticesSentSince: statement(
    "notices_sent_since",
    `SELECT at::float8 AS "sentAt" FROM audit_events
     WHERE session_id = $1 AND at >= $3 AND event = 'notified' AND (detail::jsonb ->> 'channel') = $2 ORDER BY at`,
  ),
};
