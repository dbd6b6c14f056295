// A change to a session's own state (an error seen, a person writing, a turn starting, a parent learned…), computed
// from the row inside the transaction when it depends on it. Decisions that come with an audit row have their own
// changes (skip.ts, end.ts…).
import { change, q, type Change, type Script } from "../script.js";
import type { SessionRow } from "../schema.js";
import type { SessionChange, SessionScope } from "../types.js";
import { lookColumns, withLook, type LookOwed } from "./look-owed.js";
import { ensureSession, patchSession } from "./session-row.js";

/** `update` applied to the session, with what it does to the look owed (`look`), in one transaction. */
export function changeSession(
  scope: SessionScope,
  now: number,
  update: SessionChange,
  look?: LookOwed,
): Change<SessionRow> {
  return change("change-session", scope.sessionId, () => applyChange(scope, now, update, look));
}

/**
 * Applies `update` (columns, or a function of the row) to the session, creating its row if needed, with what it does
 * to the look owed (look-owed.ts), in the same write.
 */
export function* applyChange(
  scope: SessionScope,
  now: number,
  update: SessionChange,
  look?: LookOwed,
): Script<SessionRow> {
  // Columns that do not depend on the row are written without reading it: one statement, the row created if need be.
  if (typeof update !== "function")
    return yield* q.upsertSession(scope, { ...(look && lookColumns(look)), ...update }, now);
  const row = yield* ensureSession(scope, now);
  return yield* patchSession(look ? withLook(row, look) : row, update(row), now);
}
