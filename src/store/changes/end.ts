// Every way an armed countdown ends short of firing: activity or a person cancelled it, a guard said no at its
// deadline or right before the prompt, or it was found too late after a restart. The end is written only while the
// countdown is still armed (of two writers, one ends it); the session change that goes with it is written either way.
import { EXPIRE_REASON, type AuditEntry, type CancelReason, type SkipReason } from "../../core/reasons.js";
import { auditRow } from "../audit-row.js";
import { change, q, type Change, type Script } from "../script.js";
import type { CountdownRef, SessionChange } from "../types.js";
import { applyChange } from "./change-session.js";
import type { LookOwed } from "./look-owed.js";
import { tellStop, type Telling } from "./tell-stop.js";

/** How a countdown ends, and what its audit row says. */
export type CountdownEnd =
  | { cancelled: CancelReason; detail?: Record<string, unknown> }
  | { skipped: SkipReason; detail?: Record<string, unknown> }
  | { expired: Record<string, unknown> };

export function entryOf(end: CountdownEnd): { state: "cancelled" | "expired"; entry: AuditEntry } {
  if ("cancelled" in end)
    return { state: "cancelled", entry: { event: "cancelled", reason: end.cancelled, detail: end.detail } };
  if ("skipped" in end)
    return { state: "cancelled", entry: { event: "skipped", reason: end.skipped, detail: end.detail } };
  return { state: "expired", entry: { event: "expired", reason: EXPIRE_REASON, detail: end.expired } };
}

/** Ends `countdown` if it is still armed; false when it was not (then its audit row is not written). */
export function* endArmed(countdown: CountdownRef, end: CountdownEnd, now: number): Script<boolean> {
  const { state, entry } = entryOf(end);
  return yield* q.endCountdown(
    countdown.id,
    state,
    entry.reason ?? state,
    now,
    auditRow(now, countdown, entry, countdown.id),
  );
}

/**
 * Ends the countdown if it is still armed, and applies `update` and `look` (look-owed.ts) to the session either way. A
 * guard's skip that ended it is a stop that may be told (`tell`, see tell-stop.ts).
 */
export function end(
  countdown: CountdownRef,
  how: CountdownEnd,
  now: number,
  update?: SessionChange,
  look?: LookOwed,
  tell?: Telling,
): Change<boolean> {
  return change("end", countdown.sessionId, function* () {
    const ended = yield* endArmed(countdown, how, now);
    if (ended && tell && "skipped" in how) {
      const scope = { sessionId: countdown.sessionId, directory: countdown.directory, server: countdown.server };
      yield* tellStop(scope, how.skipped, how.detail ?? {}, tell, now, { update, look });
    } else if (update || look) yield* applyChange(countdown, now, update ?? {}, look);
    return ended;
  });
}
