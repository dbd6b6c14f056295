// A person ended the session's countdown with the TUI's key (or its palette entry). Any look the session is owed goes
// with it (`recheck_at`: a failed todo read's retry, by this process or another): the key cancels the continuation of
// this idle, not one countdown of it.
import { change, q, type Change } from "../script.js";
import type { ArmedRef, SessionScope } from "../types.js";
import { endArmed } from "./end.js";
import { applyChange } from "./change-session.js";
import { TAKE } from "./look-owed.js";

/** The countdown it ended, if one was armed. */
export function cancelByKey(
  scope: SessionScope,
  now: number,
  detail: Record<string, unknown>,
): Change<ArmedRef | undefined> {
  return change("cancel-by-key", scope.sessionId, function* () {
    const armed = yield* q.armedFor(scope.sessionId);
    if (!armed) return undefined;
    if (!(yield* endArmed({ ...scope, id: armed.id }, { cancelled: "user_key", detail }, now))) return undefined;
    yield* applyChange(scope, now, {}, TAKE);
    return armed;
  });
}
