// The session row as every change reads and writes it: created on first use, patched by rewriting every column a
// change may set (so that one statement serves every patch).
import type { SessionRow } from "../schema.js";
import { q, type Script } from "../script.js";
import type { SessionChange, SessionScope, SessionUpdate } from "../types.js";

/** The session's row, created first if it has none. */
export function* ensureSession(scope: SessionScope, now: number): Script<SessionRow> {
  const existing = yield* q.session(scope.sessionId);
  if (existing) return existing;
  yield* q.insertSession(scope, now);
  const created = yield* q.session(scope.sessionId);
  if (!created) throw new Error(`the session row of ${scope.sessionId} was not there right after it was written`);
  return created;
}

/**
 * Writes `row` with `update` applied; returns the row as written. A look owed anew judges an idle as old as itself
 * unless the update says which idle it is: an earlier look's idle never sticks to a later one.
 */
export function* patchSession(row: SessionRow, update: SessionUpdate, now: number): Script<SessionRow> {
  const owed = "recheckAt" in update && !("owedSince" in update) ? { owedSince: null } : {};
  const next = { ...row, ...owed, ...update, updatedAt: now } as SessionRow;
  yield* q.writeSession(next);
  return next;
}

/** Applies `change` (columns, or a function of the row) to the session, creating its row if needed. */
export function* applyChange(scope: SessionScope, now: number, change: SessionChange): Script<SessionRow> {
  const row = yield* ensureSession(scope, now);
  return yield* patchSession(row, typeof change === "function" ? change(row) : change, now);
}
