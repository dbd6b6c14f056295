// A change to a session's own state (an error seen, a person writing, a turn starting, a parent learned…), computed
// from the row inside the transaction when it depends on it. Decisions that come with an audit row have their own
// changes (skip.ts, end.ts…).
import { change, type Change } from "../script.js";
import type { SessionRow } from "../schema.js";
import type { SessionChange, SessionScope } from "../types.js";
import { applyChange } from "./session-row.js";

export function changeSession(scope: SessionScope, now: number, update: SessionChange): Change<SessionRow> {
  return change("change-session", scope.sessionId, () => applyChange(scope, now, update));
}
