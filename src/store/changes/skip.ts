// A guard said no at an idle: the decision is its `skipped` row, written with the session change that goes with it
// (a look no longer owed, one owed later), or a look owed before a restart found too late (`expired`).
import { EXPIRE_REASON, type SkipReason } from "../../core/reasons.js";
import { auditRow } from "../audit-row.js";
import { change, q, type Change } from "../script.js";
import type { SessionChange, SessionScope } from "../types.js";
import { applyChange } from "./session-row.js";

export function skip(
  scope: SessionScope,
  now: number,
  reason: SkipReason,
  detail: Record<string, unknown>,
  update?: SessionChange,
): Change<void> {
  return change("skip", scope.sessionId, function* () {
    if (update) yield* applyChange(scope, now, update);
    yield* q.audit(auditRow(now, scope, { event: "skipped", reason, detail }));
  });
}

/** A look owed to the session (`recheck_at`) found beyond the resume window: it is dropped, and the drop recorded. */
export function expireOwedLook(scope: SessionScope, now: number, detail: Record<string, unknown>): Change<void> {
  return change("expire-owed-look", scope.sessionId, function* () {
    yield* applyChange(scope, now, { recheckAt: null });
    yield* q.audit(auditRow(now, scope, { event: "expired", reason: EXPIRE_REASON, detail }));
  });
}
