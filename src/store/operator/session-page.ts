// What a session's page reads besides its row (overview.ts): its continuations with their bills, and its notices with
// their deliveries. Its decisions are the audit trail (queries.ts `auditTrail`), its checks `checkRuns`.
import { parseLedger } from "../../core/todos.js";
import { numeric } from "./queries.js";
import type { SqlReader } from "./reader.js";

export interface ContinuationRow {
  injection_id: string;
  created_at: number;
  status: string;
  attempt: number;
  agent: string | null;
  model: string | null;
  todos_open: number;
  todos_total: number;
  error: string | null;
  /** Its bill, once its turn was billed (continuation_bills). */
  outcome: string | null;
  cost: number | null;
  tokens: number | null;
  files_changed: number | null;
  todos_closed: number | null;
}

/** The session's newest `limit` continuations, newest first, each with its bill when there is one. */
export async function continuationsOf(reader: SqlReader, sessionId: string, limit: number): Promise<ContinuationRow[]> {
  return numeric(
    await reader.all<ContinuationRow>(
      `SELECT i.id AS injection_id, i.created_at, i.status, i.attempt, i.agent, i.model, i.todos_open, i.todos_total,
         i.error, b.outcome, b.cost, b.tokens, b.files_changed, b.todos_closed
       FROM injections i
       LEFT JOIN continuation_bills b ON b.injection_id = i.id
       WHERE i.session_id = ? ORDER BY i.created_at DESC LIMIT ?`,
      sessionId,
      limit,
    ),
  );
}

export interface NoticeRow {
  notice_id: string;
  channel: string;
  kind: string;
  reason: string;
  created_at: number;
  state: string;
  attempts: number;
  sent_at: number | null;
  last_error: string | null;
}

/** The session's newest `limit` notice deliveries (one row per channel), newest first. */
export async function noticesOf(reader: SqlReader, sessionId: string, limit: number): Promise<NoticeRow[]> {
  return numeric(
    await reader.all<NoticeRow>(
      `SELECT notice_id, channel, kind, reason, created_at, state, attempts, sent_at, last_error FROM notices
       WHERE session_id = ? ORDER BY created_at DESC, channel LIMIT ?`,
      sessionId,
      limit,
    ),
  );
}

/**
 * The session's todos as far as each got since the person's last message (its progress ledger: the highest status
 * each reached, by its text), in the order first seen; empty when none was counted.
 */
export async function todosReached(
  reader: SqlReader,
  sessionId: string,
): Promise<Array<{ content: string; reached: "open" | "in progress" | "closed" }>> {
  const [row] = await reader.all<{ todo_snapshot: string | null }>(
    "SELECT todo_snapshot FROM sessions WHERE session_id = ?",
    sessionId,
  );
  const ledger = parseLedger(row?.todo_snapshot);
  if (!ledger) return [];
  const words = ["open", "in progress", "closed"] as const;
  return Object.entries(ledger.ranks).map(([content, rank]) => ({ content, reached: words[rank] ?? "open" }));
}
