// The notices outbox on PostgreSQL. A notice's lease is the database's clock, as a countdown's liveness is: replicas'
// clocks disagree, and two of them must never both take one notice.
import type { NoticeRow } from "../../schema.js";
import { earliestDueFirst } from "../../statements.js";
import { DB_NOW_MS, whole } from "../rows.js";
import { notices } from "../schema.js";
import { REQUIRED, selectList, type SomePg } from "./statement.js";

const NOTICE = selectList(notices);

export const NOTICES = {
  insertNotices: {
    sql: `INSERT INTO notices (id, notice_id, session_id, directory, server, channel, kind, reason, created_at, body,
        state, attempts, next_attempt_at, updated_at)
      SELECT n.id, n."noticeId", n."sessionId", n.directory, n.server, n.channel, n.kind, n.reason, n."createdAt",
        n.body, 'pending', 0, n."createdAt", n."createdAt"
      FROM jsonb_to_recordset($1::text::jsonb) AS n(id text, "noticeId" text, "sessionId" text, directory text,
        server text, channel text, kind text, reason text, "createdAt" bigint, body text)
      ON CONFLICT DO NOTHING`,
    async run(c, rows) {
      if (rows.length > 0) await c.rows([JSON.stringify(rows)]);
    },
  },

  // Rows another replica is taking right now are skipped, not waited for.
  claimNotices: {
    sql: `WITH free AS (
        SELECT id FROM notices
        WHERE state = 'pending' AND directory = $1 AND server IS NOT DISTINCT FROM $2
          AND channel IN (SELECT jsonb_array_elements_text($3::text::jsonb))
          AND next_attempt_at <= $4 AND (owner IS NULL OR lease_until IS NULL OR lease_until < ${DB_NOW_MS})
        ORDER BY next_attempt_at LIMIT $7
        FOR UPDATE SKIP LOCKED)
      UPDATE notices SET owner = $5, lease_until = ${DB_NOW_MS} + $6::bigint FROM free WHERE notices.id = free.id
      RETURNING ${NOTICE.replaceAll(/(^|, )([a-z_]+)/g, "$1notices.$2")}`,
    async run(c, scope, channels, owner, now, leaseMs, limit) {
      const values = [scope.directory, scope.server ?? null, JSON.stringify(channels), now, owner, leaseMs, limit];
      return whole(await c.rows<NoticeRow>(values), REQUIRED.notice).sort(earliestDueFirst);
    },
  },

  settleNotice: {
    sql: `UPDATE notices SET state = $3, attempts = $4, next_attempt_at = $5, sent_at = $6, last_error = $7, body = $8,
        updated_at = $9, owner = NULL, lease_until = NULL
      WHERE id = $1 AND owner = $2 AND state = 'pending' RETURNING id`,
    async run(c, id, owner, s, now) {
      const values = [id, owner, s.state, s.attempts, s.nextAttemptAt, s.sentAt, s.lastError, s.body, now];
      return whole(await c.rows<{ id: string }>(values), ["id"]).length > 0;
    },
  },

  pendingNoticesOf: {
    sql: `SELECT ${NOTICE} FROM notices
      WHERE session_id = $1 AND channel = $2 AND state = 'pending' ORDER BY created_at, id`,
    async run(c, sessionId, channel) {
      return whole(await c.rows<NoticeRow>([sessionId, channel]), REQUIRED.notice);
    },
  },

  foldNotices: {
    sql: `WITH folded AS (
        UPDATE notices SET state = 'folded', folded_into = $2, updated_at = $3, owner = NULL, lease_until = NULL
        WHERE state = 'pending' AND id IN (SELECT jsonb_array_elements_text($1::text::jsonb)) RETURNING 1)
      SELECT count(*)::int AS n FROM folded`,
    async run(c, ids, into, now) {
      if (ids.length === 0) return 0;
      return Number((await c.rows<{ n: number }>([JSON.stringify(ids), into, now]))[0]?.n ?? 0);
    },
  },

  noticesSentSince: {
    sql: `SELECT at::float8 AS "sentAt" FROM audit_events
      WHERE session_id = $1 AND at >= $3 AND event = 'notified' AND (detail::jsonb ->> 'channel') = $2 ORDER BY at`,
    async run(c, sessionId, channel, since) {
      return whole(await c.rows<{ sentAt: number }>([sessionId, channel, since]), ["sentAt"]).map((r) =>
        Number(r.sentAt),
      );
    },
  },
} satisfies SomePg;
