// Arming a countdown. A session has at most one armed countdown: a new one supersedes the previous, unless that one
// belongs to another process that is alive (both saw the same idle: leave it to that one), or a continuation fired
// since the idle this countdown answers already answered it. Either way nothing is armed and the skip is recorded.
import { auditRow } from "../audit-row.js";
import { change, q, type Change } from "../script.js";
import type { ArmedRef, ContinuationRef, NewCountdown, SessionUpdate } from "../types.js";
import { applyChange } from "./change-session.js";
import type { LookOwed } from "./look-owed.js";

export interface ArmOptions {
  /** Written with the countdown, in its transaction (whether or not it is armed). */
  sessionPatch?: SessionUpdate;
  /** What arming does to the look owed, written with it: a look's arming is the look made (`TAKE`). */
  look?: LookOwed;
  /**
   * When the idle this countdown answers was seen: a continuation of the session fired since then (by any process)
   * answered that idle already, and nothing is armed. Checked here, in the arming's transaction, so that a
   * continuation fired between the look's guards and its arming is not answered twice.
   */
  answeredSince?: number;
}

export interface ArmResult {
  armed: boolean;
  /** The session's armed countdown this one replaced (`cancelled: superseded`). */
  superseded?: ArmedRef;
  /** A live process's countdown that was respected: nothing was armed (`skipped: in_flight`). */
  heldBy?: ArmedRef;
  /** A continuation fired since `answeredSince`: nothing was armed (`skipped: in_flight`). */
  answeredBy?: ContinuationRef;
}

export function arm(
  countdown: NewCountdown,
  detail: Record<string, unknown>,
  options: ArmOptions = {},
): Change<ArmResult> {
  const { sessionPatch, look, answeredSince } = options;
  const at = countdown.armedAt;
  return change("arm", countdown.sessionId, function* () {
    // A countdown carries its own directory: a session row is written only to patch it.
    if (sessionPatch || look) yield* applyChange(countdown, at, sessionPatch ?? {}, look);
    // The countdown armed now, and a continuation since the idle when it answers one: one read either way, the narrow
    // one when there is no idle to ask about (a retry).
    const { answeredBy, armed: previous } =
      answeredSince === undefined
        ? { answeredBy: undefined, armed: yield* q.armedFor(countdown.sessionId) }
        : yield* q.sessionState(countdown.sessionId, { since: answeredSince, now: at });
    if (answeredBy) {
      const answered = { stage: "idle", answeredBy: answeredBy.injectionId, firedAt: answeredBy.firedAt, ...detail };
      yield* q.audit(auditRow(at, countdown, { event: "skipped", reason: "in_flight", detail: answered }));
      return { armed: false, answeredBy };
    }
    if (
      previous &&
      previous.owner !== countdown.owner &&
      (yield* q.ownerAlive(previous.owner, previous.leaseUntil, at))
    ) {
      const held = { stage: "idle", heldBy: previous.owner, ...detail };
      yield* q.audit(auditRow(at, countdown, { event: "skipped", reason: "in_flight", detail: held }, previous.id));
      return { armed: false, heldBy: previous };
    }
    if (previous) {
      const superseded = { event: "cancelled", reason: "superseded", detail: { replacedBy: countdown.id } } as const;
      yield* q.endCountdown(
        previous.id,
        "cancelled",
        "superseded",
        at,
        auditRow(at, countdown, superseded, previous.id),
      );
    }
    const { deadlineAt, todosOpen, todosTotal, attempt } = countdown;
    const armed = { deadlineAt, todosOpen, todosTotal, attempt, ...detail };
    yield* q.insertCountdown(countdown, auditRow(at, countdown, { event: "armed", detail: armed }, countdown.id));
    return { armed: true, superseded: previous };
  });
}
