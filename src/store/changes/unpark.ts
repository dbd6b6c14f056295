// A park ended with no look: a person wrote, stopped the session or pressed the TUI's key, a command dropped it, or the
// wait it recorded is over (OpenCode's own retry started). A stop ends the session's park this same way (stop.ts). The
// end is written only while the park still holds: of two writers, one ends it.
import type { ParkReason, UnparkReason } from "../../core/reasons.js";
import { auditRow } from "../audit-row.js";
import type { ParkRow } from "../schema.js";
import { change, q, type Change, type Script } from "../script.js";
import type { SessionScope } from "../types.js";

export interface UnparkResult {
  /** False: no park held (none was parked, or another writer ended it first). */
  unparked: boolean;
}

/**
 * Ends the session's park, if one holds (and is one for `only`, when given), as `unparked` with `reason`; the park it
 * ended, as it held.
 */
export function* unparkHeld(
  scope: SessionScope,
  reason: UnparkReason,
  now: number,
  only?: ParkReason,
): Script<ParkRow | undefined> {
  const park = yield* q.endPark(scope.sessionId, "unparked", reason, now, { reason: only });
  if (park) yield* q.audit(auditRow(now, scope, { event: "unparked", reason, detail: { parkId: park.id } }));
  return park;
}

export function unpark(
  scope: SessionScope,
  reason: UnparkReason,
  now: number,
  only?: ParkReason,
): Change<UnparkResult> {
  return change("unpark", scope.sessionId, function* () {
    return { unparked: (yield* unparkHeld(scope, reason, now, only)) !== undefined };
  });
}
