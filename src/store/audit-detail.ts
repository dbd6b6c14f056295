// One audit row's values, built the same way by both stores: a countdown's id leads its detail, so that every row
// about a countdown can be found by it.
import type { AuditEntry } from "../core/reasons.js";
import type { ContinuationRef, SessionScope } from "./port.js";

export function auditDetail(at: number, scope: Partial<SessionScope>, entry: AuditEntry, countdownId?: string) {
  const detail = countdownId === undefined ? (entry.detail ?? {}) : { countdownId, ...entry.detail };
  return {
    at,
    sessionId: scope.sessionId ?? null,
    directory: scope.directory ?? null,
    server: scope.server ?? null,
    event: entry.event,
    reason: entry.reason ?? null,
    detail: JSON.stringify(detail),
  };
}

/** The `skipped: in_flight` detail of an arming that a continuation fired since its idle made moot. */
export function answeredDetail(answeredBy: ContinuationRef, detail: Record<string, unknown>): Record<string, unknown> {
  return { stage: "idle", answeredBy: answeredBy.injectionId, firedAt: answeredBy.firedAt, ...detail };
}
