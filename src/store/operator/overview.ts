// What the page's overview reads (src/dashboard): every session the database knows, newest activity first, with what
// holds or moves it now (its armed countdown, its park, its check, its stop or pause), its last decision, its todos as
// the latest countdown or continuation counted them, and the day's totals. One statement for the list: the newest
// sessions first, then for each of those only, the rows its indexes find (a session's audit, injections, holds).
import type { HeldRow } from "../../core/holds.js";
import { numeric, numericRow, parseDetail } from "./queries.js";
import type { SqlReader } from "./reader.js";

/** What the list shows: all sessions, those that need the person, those on their way, or those stopped. */
export const OVERVIEW_FILTERS = ["all", "needs", "running", "stopped"] as const;
export type OverviewFilter = (typeof OVERVIEW_FILTERS)[number];

export interface OverviewQuery {
  filter: OverviewFilter;
  /** Only sessions of this project folder. */
  directory?: string;
  /** A part of a session id or title. */
  search?: string;
  /** This session only (its page). */
  sessionId?: string;
  limit: number;
}

export interface Decision {
  at: number;
  event: string;
  reason: string | null;
  detail: Record<string, unknown>;
}

export interface OverviewRow extends HeldRow {
  directory: string;
  server: string | null;
  title: string | null;
  parentId: string | null;
  continuations: number;
  cost: number;
  updatedAt: number;
  countdown: { armedAt: number; deadlineAt: number } | null;
  park: { reason: string; wakeAt: number } | null;
  checking: { command: string; startedAt: number } | null;
  last: Decision | null;
  todos: { open: number; total: number } | null;
}

/**
 * What each filter keeps, as the row says it (the state's words are src/dashboard/session-state.ts's): the person is
 * needed where a pause, a refusal or a stop they were told of holds, or the last decision waits for their answer;
 * running is every other session not stopped; stopped is the durable stop. Written for the inner query of `sessions`.
 */
const LAST_WAITS_FOR_USER = `EXISTS (SELECT 1 FROM audit_events w WHERE w.id = (SELECT max(e.id) FROM audit_events e
  WHERE e.session_id = sessions.session_id) AND w.event = 'skipped' AND w.reason = 'waiting_for_user')`;
const NEEDS = `(paused_at IS NOT NULL OR last_error_kind = 'permanent' OR notified_stop IS NOT NULL
  OR ${LAST_WAITS_FOR_USER})`;
const WHERE: Record<OverviewFilter, string> = {
  all: "",
  needs: `AND stopped_at IS NULL AND ${NEEDS}`,
  running: `AND stopped_at IS NULL AND NOT ${NEEDS}`,
  stopped: "AND stopped_at IS NOT NULL",
};

function listSql(query: OverviewQuery): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  let where = `WHERE deleted_at IS NULL ${WHERE[query.filter]}`;
  if (query.directory) {
    where += " AND directory = ?";
    params.push(query.directory);
  }
  if (query.sessionId) {
    where += " AND session_id = ?";
    params.push(query.sessionId);
  }
  if (query.search) {
    // A LIKE pattern's own wildcards in what was typed are plain characters.
    const pattern = `%${query.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    where += " AND (session_id LIKE ? ESCAPE '\\' OR title LIKE ? ESCAPE '\\')";
    params.push(pattern, pattern);
  }
  params.push(query.limit);
  const text = `SELECT s.session_id, s.directory, s.server, s.title, s.parent_id, s.stopped_at, s.stop_source,
      s.paused_at, s.last_error_kind, s.last_error_at, s.notified_stop, s.continuations, s.continuation_cost,
      s.updated_at, c.armed_at, c.deadline_at, c.todos_open AS c_open, c.todos_total AS c_total,
      p.reason AS park_reason, p.wake_at, v.command AS check_command, v.started_at AS check_started,
      a.at AS last_at, a.event AS last_event, a.reason AS last_reason, a.detail AS last_detail,
      i.todos_open AS i_open, i.todos_total AS i_total,
      t.at AS told_at, t.event AS told_event, t.detail AS told_detail
    FROM (SELECT * FROM sessions ${where} ORDER BY updated_at DESC, session_id LIMIT ?) s
    LEFT JOIN countdowns c ON c.session_id = s.session_id AND c.state = 'armed'
    LEFT JOIN parks p ON p.session_id = s.session_id AND p.state = 'parked'
    LEFT JOIN verifications v ON v.session_id = s.session_id AND v.state = 'running'
    LEFT JOIN audit_events a ON a.id = (SELECT max(e.id) FROM audit_events e WHERE e.session_id = s.session_id)
    LEFT JOIN injections i ON i.id = (SELECT j.id FROM injections j WHERE j.session_id = s.session_id
      ORDER BY j.created_at DESC LIMIT 1)
    LEFT JOIN audit_events t ON t.id = (SELECT max(e.id) FROM audit_events e WHERE e.session_id = s.session_id
      AND e.reason = s.notified_stop AND e.event IN ('skipped', 'injection_failed'))
    ORDER BY s.updated_at DESC, s.session_id`;
  return { text, params };
}

const num = (value: unknown): number | null => (value == null ? null : Number(value));
const str = (value: unknown): string | null => (value == null ? null : String(value));

function overviewRow(r: Record<string, unknown>): OverviewRow {
  const open = num(r.c_open) ?? num(r.i_open);
  const total = num(r.c_total) ?? num(r.i_total);
  const deadlineAt = num(r.deadline_at);
  const wakeAt = num(r.wake_at);
  const checkStarted = num(r.check_started);
  const lastAt = num(r.last_at);
  const toldAt = num(r.told_at);
  return {
    sessionId: String(r.session_id),
    directory: String(r.directory),
    server: str(r.server),
    title: str(r.title),
    parentId: str(r.parent_id),
    stoppedAt: num(r.stopped_at),
    stopSource: str(r.stop_source),
    pausedAt: num(r.paused_at),
    lastErrorKind: str(r.last_error_kind),
    lastErrorAt: num(r.last_error_at),
    // A countdown armed since is the session going on: the stop it was told of no longer holds it.
    notifiedStop: deadlineAt === null ? str(r.notified_stop) : null,
    told: toldAt === null ? null : { at: toldAt, event: String(r.told_event), detail: parseDetail(r.told_detail) },
    continuations: num(r.continuations) ?? 0,
    cost: Number(r.continuation_cost ?? 0),
    updatedAt: num(r.updated_at) ?? 0,
    countdown: deadlineAt === null ? null : { armedAt: num(r.armed_at) ?? 0, deadlineAt },
    park: wakeAt === null ? null : { reason: String(r.park_reason), wakeAt },
    checking: checkStarted === null ? null : { command: String(r.check_command), startedAt: checkStarted },
    last:
      lastAt === null
        ? null
        : { at: lastAt, event: String(r.last_event), reason: str(r.last_reason), detail: parseDetail(r.last_detail) },
    todos: open === null || total === null ? null : { open, total },
  };
}

/** The sessions the list shows, newest activity first. */
export async function overviewRows(reader: SqlReader, query: OverviewQuery): Promise<OverviewRow[]> {
  const { text, params } = listSql(query);
  return (await reader.all<Record<string, unknown>>(text, ...params)).map(overviewRow);
}

/** The project folders sessions belong to, with how many each, for the list's filter. */
export async function projects(reader: SqlReader): Promise<Array<{ directory: string; sessions: number }>> {
  return numeric(
    await reader.all<{ directory: string; sessions: number }>(
      `SELECT directory, count(*) AS sessions FROM sessions WHERE deleted_at IS NULL GROUP BY directory
       ORDER BY directory`,
    ),
  );
}

export interface DayTotals {
  continuations: number;
  cost: number;
  noticesPending: number;
  noticesFailed: number;
}

/** Since `dayStart` (epoch ms): continuations sent and what their turns cost; the outbox's notices now. */
export async function dayTotals(reader: SqlReader, dayStart: number): Promise<DayTotals> {
  const [sent] = await reader.all<{ n: number }>(
    "SELECT count(*) AS n FROM injections WHERE created_at >= ? AND status = 'sent'",
    dayStart,
  );
  const [spent] = await reader.all<{ cost: number | null }>(
    "SELECT sum(cost) AS cost FROM continuation_bills WHERE recorded_at >= ?",
    dayStart,
  );
  const notices = numeric(
    await reader.all<{ state: string; n: number }>(
      "SELECT state, count(*) AS n FROM notices WHERE state IN ('pending', 'failed') GROUP BY state",
    ),
  );
  const count = (state: string) => notices.find((n) => n.state === state)?.n ?? 0;
  return {
    continuations: numericRow(sent ?? { n: 0 }).n,
    cost: Number(spent?.cost ?? 0),
    noticesPending: count("pending"),
    noticesFailed: count("failed"),
  };
}
