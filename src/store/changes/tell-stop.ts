// A stop is told once: the first time a session stops for a reason a person must hear of, its row remembers the reason
// (`notified_stop`, cleared when a continuation goes out or the person writes) and the notices it makes are written to
// the outbox, one per channel that takes its kind — in the transaction of the skip that decided the stop (skip.ts,
// end.ts), or on its own for the stop that no skip decides (continuations given up). A repeat of the same stop at the
// next idle finds the reason remembered and tells nothing.
import { noticeKindOf, noticeOf, type NoticeKind } from "../../core/notices.js";
import { STOP_NOTICES } from "../../core/skip-reasons.js";
import type { TodoSummary } from "../../core/todos.js";
import { change, q, type Change, type Script } from "../script.js";
import type { SessionRow } from "../schema.js";
import type { NewNotice, SessionChange, SessionScope } from "../types.js";
import { applyChange } from "./change-session.js";
import { withLook, type LookOwed } from "./look-owed.js";
import { ensureSession, patchSession } from "./session-row.js";

/** What the caller knows that the notice carries, and where notices go. */
export interface Telling {
  /** The notice's id (each channel's row is `<id>:<channel>`). */
  noticeId: string;
  channels: ReadonlyArray<{ name: string; kinds: readonly NoticeKind[] }>;
  todos?: TodoSummary;
  title?: string;
}

export interface Told {
  /** The stop is news: the first of its reason since the session last moved. */
  news: boolean;
  /** Outbox rows written. */
  notices: number;
  kind?: NoticeKind;
}

const NOTHING: Told = { news: false, notices: 0 };

/** Whether a skip of `reason` is a stop that is told (a toast, a notice) at all. */
export function isTold(reason: string): boolean {
  return STOP_NOTICES.has(reason) || noticeKindOf(reason, true) !== undefined;
}

/**
 * Whether a skip of `reason` would tell a stop now: one that is told at all, and not the one the session was last told
 * of. `row`: the session's row (none yet: nothing told).
 */
export function isNews(row: Pick<SessionRow, "notifiedStop" | "continuations"> | undefined, reason: string): boolean {
  const continued = (row?.continuations ?? 0) > 0;
  // All done is news only after continuations: nothing is remembered for a list the person watched close.
  return row?.notifiedStop !== reason && (STOP_NOTICES.has(reason) || noticeKindOf(reason, continued) !== undefined);
}

/**
 * Tells the stop of `reason` if it is news, with the session change and the look owed that go with its decision
 * (`along`) folded into the same write of the row.
 */
export function* tellStop(
  scope: SessionScope,
  reason: string,
  detail: Record<string, unknown>,
  telling: Telling,
  now: number,
  along: { update?: SessionChange; look?: LookOwed } = {},
): Script<Told> {
  const moving = along.update !== undefined || along.look !== undefined;
  if (!isTold(reason)) {
    if (moving) yield* applyChange(scope, now, along.update ?? {}, along.look);
    return NOTHING;
  }
  const existing = yield* q.session(scope.sessionId);
  const news = isNews(existing, reason);
  if (!news && !moving) return NOTHING;
  const base = existing ?? (yield* ensureSession(scope, now));
  const update = typeof along.update === "function" ? along.update(base) : (along.update ?? {});
  const looked = along.look ? withLook(base, along.look) : base;
  const row = yield* patchSession(looked, news ? { ...update, notifiedStop: reason } : update, now);
  if (!news) return NOTHING;
  const notice = noticeOf({
    id: telling.noticeId,
    now,
    directory: scope.directory,
    sessionId: scope.sessionId,
    title: telling.title,
    reason,
    detail,
    todos: telling.todos,
    continuations: { count: row.continuations, cost: row.continuationCost, tokens: row.continuationTokens },
  });
  if (!notice) return { news: true, notices: 0 };
  const body = JSON.stringify(notice);
  const rows: NewNotice[] = telling.channels
    .filter((channel) => channel.kinds.includes(notice.kind))
    .map((channel) => ({
      ...scope,
      id: `${notice.id}:${channel.name}`,
      noticeId: notice.id,
      channel: channel.name,
      kind: notice.kind,
      reason,
      createdAt: now,
      body,
    }));
  if (rows.length > 0) yield* q.insertNotices(rows);
  return { news: true, notices: rows.length, kind: notice.kind };
}

/** The stop of `reason` told on its own transaction: one no skip decides (the continuations given up). */
export function tellStopChange(
  scope: SessionScope,
  reason: string,
  detail: Record<string, unknown>,
  telling: Telling,
  now: number,
): Change<Told> {
  return change("tell-stop", scope.sessionId, () => tellStop(scope, reason, detail, telling, now));
}
