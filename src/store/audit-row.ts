// One audit row's values, built here for every backend: a countdown's id leads its detail, so that every row about a
// countdown can be found by it.
import type { AuditEntry } from "../core/reasons.js";
import type { SessionScope } from "./types.js";

export interface AuditValues {
  at: number;
  sessionId: string | null;
  directory: string | null;
  server: string | null;
  event: string;
  reason: string | null;
  /** JSON text. */
  detail: string;
}

export function auditRow(
  at: number,
  scope: Partial<SessionScope>,
  entry: AuditEntry,
  countdownId?: string,
): AuditValues {
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
