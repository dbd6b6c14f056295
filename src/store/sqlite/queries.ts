// What operators read: the history, the audit trail, what is armed or stuck now, and the schema's state. The SQL
// is explicit (through the views users query too), parameters are always bound, never interpolated.
import { readMigrationFiles } from "drizzle-orm/migrator";
import { statSync } from "node:fs";
import { lastAppliedMigration, MIGRATIONS_TABLE } from "./migrate.js";
import { SHIPPED_MIGRATIONS, type RawDatabase, type Store } from "./open.js";

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

export function injectionHistory(raw: RawDatabase, filter: { session?: string; limit: number }): HistoryRow[] {
  const where = filter.session ? "WHERE session_id = ?" : "";
  const params: unknown[] = filter.session ? [filter.session, filter.limit] : [filter.limit];
  // The newest `limit` rows, shown oldest first.
  return raw.all<HistoryRow>(
    `SELECT * FROM (SELECT injection_id, session_id, created_at, status, agent, model, todos_open, todos_total, attempt, late_ms, error
       FROM injection_history ${where} ORDER BY created_at DESC LIMIT ?) ORDER BY created_at`,
    ...params,
  );
}

export interface AuditRow {
  id: number;
  at: number;
  session_id: string | null;
  event: string;
  reason: string | null;
  detail: string | null;
}

export function auditTrail(
  raw: RawDatabase,
  filter: { session?: string; reason?: string; event?: string; since?: number; limit: number },
): AuditRow[] {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if (filter.session) (clauses.push("session_id = ?"), params.push(filter.session));
  if (filter.reason) (clauses.push("reason = ?"), params.push(filter.reason));
  if (filter.event) (clauses.push("event = ?"), params.push(filter.event));
  if (filter.since !== undefined) (clauses.push("at >= ?"), params.push(filter.since));
  const where = clauses.length ? `WHERE ${clauses.join(" AND ")}` : "";
  return raw.all<AuditRow>(
    `SELECT * FROM (SELECT id, at, session_id, event, reason, detail FROM audit_events ${where} ORDER BY id DESC LIMIT ?) ORDER BY id`,
    ...params,
    filter.limit,
  );
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

export function armedCountdowns(raw: RawDatabase): ArmedRow[] {
  return raw.all<ArmedRow>(
    "SELECT countdown_id, session_id, directory, armed_at, deadline_at, owner, lease_until, attempt, todos_open, todos_total FROM armed_countdowns ORDER BY deadline_at",
  );
}

export interface StoppedRow {
  session_id: string;
  directory: string;
  stopped_at: number;
  stop_source: string | null;
}

export function stoppedSessions(raw: RawDatabase): StoppedRow[] {
  return raw.all<StoppedRow>(
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
export function pausedSessions(raw: RawDatabase): PausedRow[] {
  return raw.all<PausedRow>(
    "SELECT session_id, directory, paused_at, pause_message_id FROM sessions WHERE paused_at IS NOT NULL AND stopped_at IS NULL AND deleted_at IS NULL ORDER BY paused_at",
  );
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
export function unsettledInjections(raw: RawDatabase): UnsettledRow[] {
  return raw.all<UnsettledRow>(
    "SELECT id, session_id, status, created_at, owner, lease_until, error FROM injections WHERE status IN ('pending', 'unknown') ORDER BY created_at",
  );
}

export interface SchemaState {
  shipped: number;
  applied: number;
  latestShipped: number | null;
  latestApplied: number | null;
  pending: number;
  /** The file was migrated by a newer version of the enforcer. */
  newer: boolean;
}

export function schemaState(raw: RawDatabase, migrationsFolder = SHIPPED_MIGRATIONS): SchemaState {
  const shipped = readMigrationFiles({ migrationsFolder });
  const latestApplied = lastAppliedMigration(raw);
  const applied =
    latestApplied === null ? 0 : raw.all<{ n: number }>(`SELECT count(*) AS n FROM "${MIGRATIONS_TABLE}"`)[0]!.n;
  const latestShipped = shipped.at(-1)?.folderMillis ?? null;
  const pending = shipped.filter((m) => latestApplied === null || m.folderMillis > latestApplied).length;
  return {
    shipped: shipped.length,
    applied,
    latestShipped,
    latestApplied,
    pending,
    newer: latestApplied !== null && latestShipped !== null && latestApplied > latestShipped,
  };
}

export interface Integrity {
  ok: boolean;
  messages: string[];
}

export function quickCheck(raw: RawDatabase): Integrity {
  try {
    const rows = raw.all<{ quick_check: string }>("PRAGMA quick_check");
    const messages = rows.map((r) => r.quick_check);
    return { ok: messages.length === 1 && messages[0] === "ok", messages };
  } catch (error) {
    return { ok: false, messages: [error instanceof Error ? error.message : String(error)] };
  }
}

export function fileSize(store: Pick<Store, "path">): { bytes: number; walBytes: number } {
  const size = (p: string) => {
    try {
      return statSync(p).size;
    } catch {
      return 0;
    }
  };
  return { bytes: size(store.path), walBytes: size(`${store.path}-wal`) };
}

/** What the TUI panel shows for one session: its stop and pause, its armed countdown, its last decision, its budget. */
export interface SessionView {
  sessionId: string;
  stoppedAt: number | null;
  stopSource: string | null;
  pausedAt: number | null;
  continuations: number;
  /** The budget as of the last countdown armed (`detail.maxContinuations`), when there was one. */
  maxContinuations: number | null;
  countdown: {
    id: string;
    armedAt: number;
    deadlineAt: number;
    todosOpen: number | null;
    todosTotal: number | null;
  } | null;
  lastDecision: { at: number; event: string; reason: string | null; detail: Record<string, unknown> } | null;
}

function parseDetail(text: unknown): Record<string, unknown> {
  if (typeof text !== "string") return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function sessionView(raw: RawDatabase, sessionId: string): SessionView {
  const session = raw.all<{
    stopped_at: number | null;
    stop_source: string | null;
    paused_at: number | null;
    continuations: number;
  }>("SELECT stopped_at, stop_source, paused_at, continuations FROM sessions WHERE session_id = ?", sessionId)[0];
  const countdown = raw.all<{
    id: string;
    armed_at: number;
    deadline_at: number;
    todos_open: number | null;
    todos_total: number | null;
  }>(
    "SELECT id, armed_at, deadline_at, todos_open, todos_total FROM countdowns WHERE session_id = ? AND state = 'armed' LIMIT 1",
    sessionId,
  )[0];
  const last = raw.all<{ at: number; event: string; reason: string | null; detail: string | null }>(
    "SELECT at, event, reason, detail FROM audit_events WHERE session_id = ? ORDER BY at DESC, id DESC LIMIT 1",
    sessionId,
  )[0];
  const budget = raw.all<{ detail: string | null }>(
    "SELECT detail FROM audit_events WHERE session_id = ? AND event = 'armed' ORDER BY at DESC, id DESC LIMIT 1",
    sessionId,
  )[0];
  const limit = parseDetail(budget?.detail).maxContinuations;
  return {
    sessionId,
    stoppedAt: session?.stopped_at ?? null,
    stopSource: session?.stop_source ?? null,
    pausedAt: session?.paused_at ?? null,
    continuations: session?.continuations ?? 0,
    maxContinuations: typeof limit === "number" ? limit : null,
    countdown: countdown
      ? {
          id: countdown.id,
          armedAt: countdown.armed_at,
          deadlineAt: countdown.deadline_at,
          todosOpen: countdown.todos_open,
          todosTotal: countdown.todos_total,
        }
      : null,
    lastDecision: last
      ? { at: last.at, event: last.event, reason: last.reason, detail: parseDetail(last.detail) }
      : null,
  };
}
