// What became of a notice the sender held: sent (the notices it stood for folded into it), failed for now (the next
// attempt after a backoff) or for good, or held back (a newer notice stands for it, or the rate limit), with the audit
// row that says so (`notified`, `notice_failed`; none for a notice held back). Written only while the sender still
// holds the notice: one whose lease ran out and that another process took is that process's to settle.
import type { NoticeKind } from "../../core/reasons.js";
import { auditRow } from "../audit-row.js";
import type { NoticeRow } from "../schema.js";
import { change, q, type Change } from "../script.js";

export type NoticeOutcome =
  | { sent: true; body: string; folded: readonly string[]; deliveryMs: number }
  | { sent: false; error: string; retryAt?: number; body: string; deliveryMs: number }
  | { heldUntil: number; why: string };

/** `channelType`: the channel's kind of service (webhook, ntfy…), for the audit row and the metrics' labels. */
export function settleNotice(
  notice: NoticeRow,
  owner: string,
  outcome: NoticeOutcome,
  channelType: string,
  now: number,
): Change<boolean> {
  return change("settle-notice", notice.sessionId, function* () {
    if ("heldUntil" in outcome)
      return yield* q.settleNotice(notice.id, owner, { ...unchanged(notice), nextAttemptAt: outcome.heldUntil }, now);
    const attempt = notice.attempts + 1;
    const settled = yield* q.settleNotice(
      notice.id,
      owner,
      {
        state: outcome.sent ? "sent" : outcome.retryAt === undefined ? "failed" : "pending",
        attempts: attempt,
        nextAttemptAt: outcome.sent ? notice.nextAttemptAt : (outcome.retryAt ?? now),
        sentAt: outcome.sent ? now : null,
        lastError: outcome.sent ? notice.lastError : outcome.error,
        body: outcome.body,
      },
      now,
    );
    if (!settled) return false;
    const of = { noticeId: notice.noticeId, channel: notice.channel, channelType, attempt };
    const reason = notice.kind as NoticeKind;
    if (outcome.sent) {
      const folded = yield* q.foldNotices(outcome.folded, notice.id, now);
      const detail = { ...of, folded, deliveryMs: outcome.deliveryMs };
      yield* q.audit(auditRow(now, notice, { event: "notified", reason, detail }));
    } else {
      const next = outcome.retryAt === undefined ? { final: true } : { retryInMs: outcome.retryAt - now };
      const detail = { ...of, error: outcome.error, ...next, deliveryMs: outcome.deliveryMs };
      yield* q.audit(auditRow(now, notice, { event: "notice_failed", reason, detail }));
    }
    return true;
  });
}

function unchanged(notice: NoticeRow) {
  const { attempts, nextAttemptAt, sentAt, lastError, body } = notice;
  return { state: "pending" as const, attempts, nextAttemptAt, sentAt, lastError, body };
}
