// What the TUI shows of one session, read in one go: its stop and pause, its armed countdown, its park, the check
// running on its finished list, its last decision and its budget (the panel's words are src/tui/panel.ts's).
import type { ParkReason } from "../../core/reasons.js";
import { numericRow, parseDetail } from "./queries.js";
import type { SqlReader } from "./reader.js";

/** What the TUI panel shows for one session: its stop and pause, its armed countdown, its last decision, its budget. */
export interface SessionView {
  sessionId: string;
  stoppedAt: number | null;
  stopSource: string | null;
  pausedAt: number | null;
  continuations: number;
  /** The budget as of the last countdown armed (`detail.maxContinuations`), when there was one. */
  maxContinuations: number | null;
  /** What the session's continuations cost since the last real user message or resume. */
  spent: { cost: number; tokens: number };
  /** The cost budget as of the last countdown armed (`detail.maxContinuationCost`), when one was set. */
  maxCost: number | null;
  countdown: {
    id: string;
    armedAt: number;
    deadlineAt: number;
    todosOpen: number | null;
    todosTotal: number | null;
  } | null;
  lastDecision: { at: number; event: string; reason: string | null; detail: Record<string, unknown> } | null;
  /** The session's park while it holds (docs/waiting.md). */
  park: { id: string; reason: ParkReason; wakeAt: number; checkCommand: string | null } | null;
  /** The `verify` command while it runs on the session's finished list. */
  checking: { id: string; command: string; startedAt: number } | null;
}

export async function sessionView(reader: SqlReader, sessionId: string): Promise<SessionView> {
  const session = (
    await reader.all<{
      stopped_at: number | null;
      stop_source: string | null;
      paused_at: number | null;
      continuations: number;
      continuation_cost: number;
      continuation_tokens: number;
    }>(
      "SELECT stopped_at, stop_source, paused_at, continuations, continuation_cost, continuation_tokens FROM sessions WHERE session_id = ?",
      sessionId,
    )
  ).map(numericRow)[0];
  const countdown = (
    await reader.all<{
      id: string;
      armed_at: number;
      deadline_at: number;
      todos_open: number | null;
      todos_total: number | null;
    }>(
      "SELECT id, armed_at, deadline_at, todos_open, todos_total FROM countdowns WHERE session_id = ? AND state = 'armed' LIMIT 1",
      sessionId,
    )
  ).map(numericRow)[0];
  const last = (
    await reader.all<{ at: number; event: string; reason: string | null; detail: string | null }>(
      "SELECT at, event, reason, detail FROM audit_events WHERE session_id = ? ORDER BY at DESC, id DESC LIMIT 1",
      sessionId,
    )
  ).map(numericRow)[0];
  const park = (
    await reader.all<{ id: string; reason: ParkReason; wake_at: number; check_command: string | null }>(
      "SELECT id, reason, wake_at, check_command FROM parks WHERE session_id = ? AND state = 'parked' LIMIT 1",
      sessionId,
    )
  ).map(numericRow)[0];
  const checking = (
    await reader.all<{ id: string; command: string; started_at: number }>(
      "SELECT id, command, started_at FROM verifications WHERE session_id = ? AND state = 'running' LIMIT 1",
      sessionId,
    )
  ).map(numericRow)[0];
  const budget = (
    await reader.all<{ detail: string | null }>(
      "SELECT detail FROM audit_events WHERE session_id = ? AND event = 'armed' ORDER BY at DESC, id DESC LIMIT 1",
      sessionId,
    )
  )[0];
  const armedWith = parseDetail(budget?.detail);
  const limit = armedWith.maxContinuations;
  const maxCost = armedWith.maxContinuationCost;
  return {
    sessionId,
    stoppedAt: session?.stopped_at ?? null,
    stopSource: session?.stop_source ?? null,
    pausedAt: session?.paused_at ?? null,
    continuations: session?.continuations ?? 0,
    maxContinuations: typeof limit === "number" ? limit : null,
    spent: { cost: Number(session?.continuation_cost ?? 0), tokens: Number(session?.continuation_tokens ?? 0) },
    maxCost: typeof maxCost === "number" ? maxCost : null,
    countdown: countdown
      ? {
          id: countdown.id,
          armedAt: countdown.armed_at,
          deadlineAt: countdown.deadline_at,
          todosOpen: countdown.todos_open,
          todosTotal: countdown.todos_total,
        }
      : null,
    park: park ? { id: park.id, reason: park.reason, wakeAt: park.wake_at, checkCommand: park.check_command } : null,
    checking: checking ? { id: checking.id, command: checking.command, startedAt: checking.started_at } : null,
    lastDecision: last
      ? { at: last.at, event: last.event, reason: last.reason, detail: parseDetail(last.detail) }
      : null,
  };
}
