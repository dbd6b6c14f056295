// The notices outbox's statements on SQLite, in SQL run on the driver itself: a sender's few statements a minute need
// no prepared drizzle query, and the claim binds its channels as one JSON array. What each means: ../statements.ts.
import type { Scope } from "../types.js";

/** A notice row's columns under the names of NoticeRow. */
const NOTICE_COLUMNS = `id, notice_id AS noticeId, session_id AS sessionId, directory, server, channel, kind, reason,
  created_at AS createdAt, body, state, attempts, next_attempt_at AS nextAttemptAt, owner, lease_until AS leaseUntil,
  sent_at AS sentAt, last_error AS lastError, folded_into AS foldedInto, updated_at AS updatedAt`;

export const INSERT_NOTICE = `INSERT INTO notices (id, notice_id, session_id, directory, server, channel, kind, reason,
  created_at, body, state, attempts, next_attempt_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?) ON CONFLICT DO NOTHING`;

/** Bound: owner, lease until, directory, server, channels (JSON), now, now, limit. */
export const CLAIM_NOTICES = `UPDATE notices SET owner = ?, lease_until = ?
  WHERE id IN (
    SELECT id FROM notices
    WHERE state = 'pending' AND directory = ? AND server IS ? AND channel IN (SELECT value FROM json_each(?))
      AND next_attempt_at <= ? AND (owner IS NULL OR lease_until IS NULL OR lease_until < ?)
    ORDER BY next_attempt_at LIMIT ?)
  RETURNING ${NOTICE_COLUMNS}`;

/** Bound: state, attempts, next attempt, sent at, last error, body, now, id, owner. */
export const SETTLE_NOTICE = `UPDATE notices SET state = ?, attempts = ?, next_attempt_at = ?, sent_at = ?,
  last_error = ?, body = ?, updated_at = ?, owner = NULL, lease_until = NULL
  WHERE id = ? AND owner = ? AND state = 'pending'`;

export const PENDING_NOTICES_OF = `SELECT ${NOTICE_COLUMNS} FROM notices
  WHERE session_id = ? AND channel = ? AND state = 'pending' ORDER BY created_at, id`;

/** Bound: into, now, ids (JSON). */
export const FOLD_NOTICES = `UPDATE notices SET state = 'folded', folded_into = ?, updated_at = ?, owner = NULL,
  lease_until = NULL WHERE state = 'pending' AND id IN (SELECT value FROM json_each(?))`;

/** From the `notified` rows (audit_session_idx): the outbox keeps no index by session, to keep a stop's insert cheap. */
export const NOTICES_SENT_SINCE = `SELECT at AS sentAt FROM audit_events
  WHERE session_id = ? AND at >= ? AND event = 'notified' AND json_extract(detail, '$.channel') = ? ORDER BY at`;

export const claimParams = (
  scope: Scope,
  channels: readonly string[],
  owner: string,
  now: number,
  leaseMs: number,
  limit: number,
) => [owner, now + leaseMs, scope.directory, scope.server ?? null, JSON.stringify(channels), now, now, limit];
