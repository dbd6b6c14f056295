// The notices outbox on SQLite, in SQL prepared on the driver itself: a sender's few statements a minute need no
// drizzle query, and the claim binds its channels as one JSON array.
import { earliestDueFirst } from "../../statements.js";
import type { NoticeRow } from "../../schema.js";
import type { SomePrepared } from "./prepare.js";

/** A notice row's columns under the names of NoticeRow. */
const NOTICE_COLUMNS = `id, notice_id AS noticeId, session_id AS sessionId, directory, server, channel, kind, reason,
  created_at AS createdAt, body, state, attempts, next_attempt_at AS nextAttemptAt, owner, lease_until AS leaseUntil,
  sent_at AS sentAt, last_error AS lastError, folded_into AS foldedInto, updated_at AS updatedAt`;

export const NOTICES = {
  insertNotices: ({ raw }) => {
    const insert = raw.prepare(`INSERT INTO notices (id, notice_id, session_id, directory, server, channel, kind,
      reason, created_at, body, state, attempts, next_attempt_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?) ON CONFLICT DO NOTHING`);
    return (notices) => {
      for (const n of notices) {
        const { id, noticeId, sessionId, directory, channel, kind, reason, createdAt, body } = n;
        insert.run(
          id,
          noticeId,
          sessionId,
          directory,
          n.server ?? null,
          channel,
          kind,
          reason,
          createdAt,
          body,
          createdAt,
          createdAt,
        );
      }
    };
  },

  claimNotices: ({ raw }) => {
    const claim = raw.prepare(`UPDATE notices SET owner = ?, lease_until = ?
      WHERE id IN (
        SELECT id FROM notices
        WHERE state = 'pending' AND directory = ? AND server IS ? AND channel IN (SELECT value FROM json_each(?))
          AND next_attempt_at <= ? AND (owner IS NULL OR lease_until IS NULL OR lease_until < ?)
        ORDER BY next_attempt_at LIMIT ?)
      RETURNING ${NOTICE_COLUMNS}`);
    return (scope, channels, owner, now, leaseMs, limit) =>
      claim
        .all<NoticeRow>(
          owner,
          now + leaseMs,
          scope.directory,
          scope.server ?? null,
          JSON.stringify(channels),
          now,
          now,
          limit,
        )
        .sort(earliestDueFirst);
  },

  settleNotice: ({ raw }) => {
    const settle = raw.prepare(`UPDATE notices SET state = ?, attempts = ?, next_attempt_at = ?, sent_at = ?,
      last_error = ?, body = ?, updated_at = ?, owner = NULL, lease_until = NULL
      WHERE id = ? AND owner = ? AND state = 'pending'`);
    return (id, owner, { state, attempts, nextAttemptAt, sentAt, lastError, body }, now) =>
      settle.run(state, attempts, nextAttemptAt, sentAt, lastError, body, now, id, owner).changes > 0;
  },

  pendingNoticesOf: ({ raw }) => {
    const select = raw.prepare(`SELECT ${NOTICE_COLUMNS} FROM notices
      WHERE session_id = ? AND channel = ? AND state = 'pending' ORDER BY created_at, id`);
    return (sessionId, channel) => select.all<NoticeRow>(sessionId, channel);
  },

  foldNotices: ({ raw }) => {
    const fold = raw.prepare(`UPDATE notices SET state = 'folded', folded_into = ?, updated_at = ?, owner = NULL,
      lease_until = NULL WHERE state = 'pending' AND id IN (SELECT value FROM json_each(?))`);
    return (ids, into, now) => (ids.length === 0 ? 0 : fold.run(into, now, JSON.stringify(ids)).changes);
  },

  // From the `notified` rows (audit_session_idx): the outbox keeps no index by session, to keep a stop's insert cheap.
  noticesSentSince: ({ raw }) => {
    const select = raw.prepare(`SELECT at AS sentAt FROM audit_events
      WHERE session_id = ? AND at >= ? AND event = 'notified' AND json_extract(detail, '$.channel') = ? ORDER BY at`);
    return (sessionId, channel, since) =>
      select.all<{ sentAt: number }>(sessionId, since, channel).map((r) => r.sentAt);
  },
} satisfies SomePrepared;
