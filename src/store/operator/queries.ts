// What operators read: the history, the audit trail, what is armed or stuck now. The SQL is explicit (through the views
// users query too), the same on SQLite and PostgreSQL; parameters are always bound, never interpolated. Numbers are
// coerced because PostgreSQL's 64-bit integers may arrive as strings.
import type { HeldRow } from "../../core/holds.js";
import type { SqlReader } from "./reader.js";

/** Integer columns that PostgreSQL's drivers may return as strings (int8, count(*)). */
const NUMERIC = /(_at|_until|_ms|^id|^attempt|^todos_\w+|^continuations|^skips|^sessions|^n)$/;

export function numericRow<T>(row: T): T {
  const copy = { ...(row as Record<string, unknown>) };
  for (const [key, value] of Object.entries(copy))
    if (typeof value === "string" && NUMERIC.test(key) && /^-?\d+(\.\d+)?$/.test(value)) copy[key] = Number(value);
  return copy as T;
}

/** A row's JSON `detail` as an object ({} for none or one that does not parse). */
export function parseDetail(text: unknown): Record<string, unknown> {
  if (typeof text !== "string") return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Rows with the integer columns PostgreSQL's drivers gave as strings made numbers. */
export function numeric<T>(rows: T[]): T[] {
  return rows.map(numericRow);
}

/** The rows of a query without parameters, numbers coerced. */
async function rowsOf<T>(reader: SqlReader, text: string): Promise<T[]> {
  return numeric(await reader.all<T>(text));
}

export interface HistoryRow {
  injection_id: string;
  session_id: string;
  created_at: number;
  status: string;
  agent: string | null;
  model: string | null;
  todos_open: number;
  todos_total: number;
  attempt: number;
  late_ms: number | null;
  error: string | null;
}

export function injectionHistory(
  reader: SqlReader,
  filter: { session?: string; limit: number },
): Promise<HistoryRow[]> {
  const columns =
    "injection_id, session_id, created_at, status, agent, model, todos_open, todos_total, attempt, late_ms, error";
  return newestOf<HistoryRow>(reader, { columns, from: "injection_history", order: "created_at" }, filter);
}

/** The newest `limit` rows of `of.from` (of one session, if named), shown oldest first by `of.order`. */
async function newestOf<T>(
  reader: SqlReader,
  of: { columns: string; from: string; order: string },
  filter: { session?: string; limit: number },
): Promise<T[]> {
  const where = filter.session ? "WHERE session_id = ?" : "";
  const params: unknown[] = filter.session ? [filter.session, filter.limit] : [filter.limit];
  return numeric(
    await reader.all<T>(
      `SELECT * FROM (SELECT ${of.columns} FROM ${of.from} ${where} ORDER BY ${of.order} DESC LIMIT ?) AS recent
       ORDER BY ${of.order}`,
      ...params,
    ),
  );
}

export interface CheckRunRow {
  id: string;
  session_id: string;
  command: string;
  state: string;
  started_at: number;
  ended_at: number | null;
  exit_code: number | null;
  duration_ms: number | null;
  failures: number;
  repeated: boolean | number;
  output_tail: string | null;
}

/** The runs of the `verify` command, the newest `limit` (of one session, if named), oldest first. */
export function checkRuns(reader: SqlReader, filter: { session?: string; limit: number }): Promise<CheckRunRow[]> {
  const columns =
    "id, session_id, command, state, started_at, ended_at, exit_code, duration_ms, failures, repeated, output_tail";
  return newestOf<CheckRunRow>(reader, { columns, from: "verifications", order: "started_at" }, filter);
}

export interface UnfinishedCheckRow {
  at: number;
  session_id: string | null;
  reason: string;
  detail: string | null;
}

/**
 * Checks of finished lists since `since` that could not start or did not finish (`verify_failed` with `not_run` or
 * `timeout`), the newest first, at most `limit`: what `doctor` says plainly.
 */
export function unfinishedChecks(reader: SqlReader, since: number, limit = 5): Promise<UnfinishedCheckRow[]> {
  return reader
    .all<UnfinishedCheckRow>(
      `SELECT at, session_id, reason, detail FROM audit_events
       WHERE event = 'verify_failed' AND reason IN ('not_run', 'timeout') AND at >= ? ORDER BY id DESC LIMIT ?`,
      since,
      limit,
    )
    .then(numeric);
}

export interface AuditRow {
  id: number;
  at: number;
  session_id: string | null;
  event: string;
  reason: string | null;
  detail: string | null;
}

export async function auditTrail(
  reader: SqlReader,
  filter: { session?: string; reason?: string; event?: string; since?: number; limit: number },
): Promise<AuditRow[]> {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if (filter.session) (clauses.push("session_id = ?"), params.push(filter.session));
  if (filter.reason) (clauses.push("reason = ?"), params.push(filter.reason));
  if (filter.event) (clauses.push("event = ?"), params.push(filter.event));
  if (filter.since !== undefined) (clauses.push("at >= ?"), params.push(filter.since));
  const where = clauses.length ? `WHERE ${clauses.join(" AND ")}` : "";
  return numeric(
    await reader.all<AuditRow>(
      `SELECT * FROM (SELECT id, at, session_id, event, reason, detail FROM audit_events ${where} ORDER BY id DESC LIMIT ?) AS recent ORDER BY id`,
      ...params,
      filter.limit,
    ),
  );
}

/** Whether the database has seen the session: a row of its own, or any decision about it. */
export async function sessionSeen(reader: SqlReader, sessionId: string): Promise<boolean> {
  const rows = await reader.all(
    `SELECT 1 AS seen FROM sessions WHERE session_id = ?
     UNION ALL SELECT 1 AS seen FROM (SELECT 1 FROM audit_events WHERE session_id = ? LIMIT 1) AS decided`,
    sessionId,
    sessionId,
  );
  return rows.length > 0;
}

export interface ArmedRow {
  countdown_id: string;
  session_id: string;
  directory: string;
  armed_at: number;
  deadline_at: number;
  owner: string | null;
  lease_until: number | null;
  attempt: number;
  todos_open: number | null;
  todos_total: number | null;
}

export function armedCountdowns(reader: SqlReader): Promise<ArmedRow[]> {
  return rowsOf(
    reader,
    "SELECT countdown_id, session_id, directory, armed_at, deadline_at, owner, lease_until, attempt, todos_open, todos_total FROM armed_countdowns ORDER BY deadline_at",
  );
}

export interface StoppedRow {
  session_id: string;
  directory: string;
  stopped_at: number;
  stop_source: string | null;
}

export function stoppedSessions(reader: SqlReader): Promise<StoppedRow[]> {
  return rowsOf(
    reader,
    "SELECT session_id, directory, stopped_at, stop_source FROM sessions WHERE stopped_at IS NOT NULL ORDER BY stopped_at",
  );
}

export interface PausedRow {
  session_id: string;
  directory: string;
  paused_at: number;
  pause_message_id: string | null;
}

/** Sessions the user took over after a continuation (and not stopped): held until progress or a resume. */
export function pausedSessions(reader: SqlReader): Promise<PausedRow[]> {
  return rowsOf(
    reader,
    "SELECT session_id, directory, paused_at, pause_message_id FROM sessions WHERE paused_at IS NOT NULL AND stopped_at IS NULL AND deleted_at IS NULL ORDER BY paused_at",
  );
}

export interface ParkedRow {
  session_id: string;
  directory: string;
  reason: string;
  parked_at: number;
  wake_at: number;
  since: number;
  check_command: string | null;
  detail: string | null;
}

/** Sessions parked now, the earliest to wake first: each waits for its time (or its check), costing nothing. */
export function parkedSessions(reader: SqlReader): Promise<ParkedRow[]> {
  return rowsOf(
    reader,
    "SELECT session_id, directory, reason, parked_at, wake_at, since, check_command, detail FROM parks WHERE state = 'parked' ORDER BY wake_at, id",
  );
}

export interface RunningCheckRow {
  session_id: string;
  directory: string;
  command: string;
  started_at: number;
  owner: string | null;
  lease_until: number | null;
}

/** The `verify` command running now, a row per session, the longest running first. */
export function runningChecks(reader: SqlReader): Promise<RunningCheckRow[]> {
  return rowsOf(
    reader,
    "SELECT session_id, directory, command, started_at, owner, lease_until FROM verifications WHERE state = 'running' ORDER BY started_at, id",
  );
}

/** A held session's row, with its directory. */
export type HeldSessionRow = HeldRow & { directory: string };

/**
 * Sessions something may hold until someone acts: stopped, paused, refused by the provider, or told a stop of one of
 * `stops` (the core's told stops) with no countdown armed since (one armed since is on its way again), each with the
 * latest decision of the reason it was told (its detail holds the figures the words need).
 */
export async function heldSessions(reader: SqlReader, stops: readonly string[]): Promise<HeldSessionRow[]> {
  const told = stops.length > 0 ? `OR (c.id IS NULL AND s.notified_stop IN (${stops.map(() => "?").join(", ")}))` : "";
  const rows = numeric(
    await reader.all<Record<string, unknown>>(
      `SELECT s.session_id, s.directory, s.stopped_at, s.stop_source, s.paused_at, s.last_error_kind, s.last_error_at,
         CASE WHEN c.id IS NULL THEN s.notified_stop END AS notified_stop, a.at AS told_at, a.event AS told_event,
         a.detail AS told_detail
       FROM sessions s
       LEFT JOIN countdowns c ON c.session_id = s.session_id AND c.state = 'armed'
       LEFT JOIN audit_events a ON a.id = (SELECT max(e.id) FROM audit_events e WHERE e.session_id = s.session_id
         AND e.reason = s.notified_stop AND e.event IN ('skipped', 'injection_failed'))
       WHERE s.deleted_at IS NULL
         AND (s.stopped_at IS NOT NULL OR s.paused_at IS NOT NULL OR s.last_error_kind = 'permanent' ${told})
       ORDER BY s.session_id`,
      ...stops,
    ),
  );
  return rows.map((r) => ({
    sessionId: String(r.session_id),
    directory: String(r.directory),
    stoppedAt: (r.stopped_at as number | null) ?? null,
    stopSource: (r.stop_source as string | null) ?? null,
    pausedAt: (r.paused_at as number | null) ?? null,
    lastErrorKind: (r.last_error_kind as string | null) ?? null,
    lastErrorAt: (r.last_error_at as number | null) ?? null,
    notifiedStop: (r.notified_stop as string | null) ?? null,
    told:
      r.told_at == null
        ? null
        : { at: r.told_at as number, event: String(r.told_event), detail: parseDetail(r.told_detail) },
  }));
}

export interface UnsettledRow {
  id: string;
  session_id: string;
  status: string;
  created_at: number;
  owner: string | null;
  lease_until: number | null;
  error: string | null;
}

/** Injections that are not settled: `pending` (in flight or orphaned) and `unknown` (lost in a crash). */
export function unsettledInjections(reader: SqlReader): Promise<UnsettledRow[]> {
  return rowsOf(
    reader,
    "SELECT id, session_id, status, created_at, owner, lease_until, error FROM injections WHERE status IN ('pending', 'unknown') ORDER BY created_at",
  );
}

export type CostKey = "session" | "day" | "model";

export interface CostRow {
  key: string | null;
  continuations: number;
  tokens: number;
  cost: number;
  todos_closed: number;
  files_changed: number;
  /** By session only: the whole session's spend when its last continuation was billed (null: OpenCode did not say). */
  session_cost?: number | null;
}

const COST_KEY: Record<CostKey, string> = { session: "session_id", day: "day", model: "model_id" };

/** What continuations cost, by session, UTC day or model, from `sinceDay` (YYYY-MM-DD) on; the dearest first. */
export async function continuationCosts(
  reader: SqlReader,
  filter: { by: CostKey; sinceDay?: string; session?: string },
): Promise<CostRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.sinceDay) (where.push("day >= ?"), params.push(filter.sinceDay));
  if (filter.session) (where.push("session_id = ?"), params.push(filter.session));
  const rows = await reader.all<Record<string, unknown>>(
    `SELECT ${COST_KEY[filter.by]} AS key, sum(continuations) AS continuations, sum(tokens) AS tokens,
       sum(cost) AS cost, sum(todos_closed) AS todos_closed, sum(files_changed) AS files_changed,
       max(session_cost) AS session_cost
     FROM continuation_costs ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
     GROUP BY ${COST_KEY[filter.by]} ORDER BY sum(cost) DESC, ${COST_KEY[filter.by]}`,
    ...params,
  );
  return rows.map((r) => {
    const row: CostRow = {
      key: r.key === null || r.key === undefined ? null : String(r.key),
      continuations: Number(r.continuations ?? 0),
      tokens: Number(r.tokens ?? 0),
      cost: Number(r.cost ?? 0),
      todos_closed: Number(r.todos_closed ?? 0),
      files_changed: Number(r.files_changed ?? 0),
    };
    if (filter.by === "session") row.session_cost = r.session_cost == null ? null : Number(r.session_cost);
    return row;
  });
}

export interface ModelPricing {
  provider_id: string | null;
  model_id: string | null;
  continuations: number;
  tokens: number;
  /** False when every continuation billed to the model used tokens and cost nothing: OpenCode knows no price for it. */
  priced: boolean;
}

/** The models continuations were billed to, and whether any of their bills cost something. */
export async function billedModels(reader: SqlReader): Promise<ModelPricing[]> {
  const rows = await reader.all<Record<string, unknown>>(
    `SELECT provider_id, model_id, count(*) AS continuations, sum(tokens) AS tokens, max(cost) AS dearest
     FROM continuation_bills GROUP BY provider_id, model_id ORDER BY provider_id, model_id`,
  );
  return rows.map((r) => ({
    provider_id: r.provider_id == null ? null : String(r.provider_id),
    model_id: r.model_id == null ? null : String(r.model_id),
    continuations: Number(r.continuations ?? 0),
    tokens: Number(r.tokens ?? 0),
    priced: Number(r.dearest ?? 0) > 0 || Number(r.tokens ?? 0) === 0,
  }));
}
