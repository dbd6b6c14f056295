// The session row as a change that depends on it reads and writes it: created on first use, patched by rewriting every
// column a change may set (so that one statement serves every patch). change-session.ts applies a change to it, and
// writes one that does not depend on the row without reading it (`upsertSession`).
import type { SessionRow } from "../schema.js";
import { q, type Script } from "../script.js";
import type { SessionScope, SessionUpdate } from "../types.js";

/** The session's row, created first if it has none. */
export function* ensureSession(scope: SessionScope, now: number): Script<SessionRow> {
  const existing = yield* q.session(scope.sessionId);
  if (existing) return existing;
  yield* q.insertSession(scope, now);
  const created = yield* q.session(scope.sessionId);
  if (!created) throw new Error(`the session row of ${scope.sessionId} was not there right after it was written`);
  return created;
}

/** Writes `row` with `update` applied; returns the row as written. */
export function* patchSession(row: SessionRow, update: SessionUpdate, now: number): Script<SessionRow> {
  const next = { ...row, ...update, updatedAt: now } as SessionRow;
  yield* q.writeSession(next);
  return next;
}
