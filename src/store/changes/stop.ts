// The durable stop: no continuation for the session, across restarts and new messages, until resumed. Setting it
// cancels the armed countdown, ends the session's park (a park is no way around a stop) and cancels a running check. Written by
// /stop-continuation, the API, the CLI and the TUI's palette alike.
import type { StopSource } from "../../core/reasons.js";
import { auditRow } from "../audit-row.js";
import type { ParkRow } from "../schema.js";
import { change, q, type Change } from "../script.js";
import type { ArmedRef, SessionScope } from "../types.js";
import { endArmed } from "./end.js";
import { ensureSession, patchSession } from "./session-row.js";
import { unparkHeld } from "./unpark.js";
import { cancelRunning } from "./verify.js";

export interface StopResult {
  /** False: it was stopped already. */
  changed: boolean;
  /** The armed countdown the stop cancelled. */
  cancelled?: ArmedRef;
  /** The park the stop ended (`unparked: stop`), as it held. */
  unparked?: ParkRow;
}

export function stop(scope: SessionScope, source: StopSource, now: number): Change<StopResult> {
  return change("stop", scope.sessionId, function* () {
    const row = yield* ensureSession(scope, now);
    if (row.stoppedAt != null) return { changed: false };
    yield* patchSession(row, { stoppedAt: now, stopSource: source }, now);
    yield* q.audit(auditRow(now, scope, { event: "stopped", reason: source }));
    const armed = yield* q.armedFor(scope.sessionId);
    if (armed) yield* endArmed({ ...scope, id: armed.id }, { cancelled: "stopped", detail: { source } }, now);
    const unparked = yield* unparkHeld(scope, "stop", now);
    yield* cancelRunning(scope, "stopped", now);
    return { changed: true, cancelled: armed, unparked };
  });
}
