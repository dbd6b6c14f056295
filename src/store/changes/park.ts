// Parking a session: a durable wait until a time (a provider's usage limit resets, the agent asked to continue later)
// or until a shell check passes, costing no model call while it holds; wake.ts and unpark.ts end it. A stopped session
// is never parked: a park is no way around a stop. A session parked already is parked again in place, its id and the
// time its wait began (`since`) kept, so that a cap on the wait is measured from its first park. A parked session is
// owed no look until it wakes.
import type { ParkReason } from "../../core/reasons.js";
import { auditRow, type AuditValues } from "../audit-row.js";
import { change, q, type Change, type Script } from "../script.js";
import type { ParkRow } from "../schema.js";
import type { ParkTerms, SessionScope } from "../types.js";
import { TAKE, withLook } from "./look-owed.js";
import { patchSession } from "./session-row.js";

export interface ParkRequest {
  /** `park_` and a random part: the new park's id (a park parked again in place keeps its own). */
  id: string;
  reason: ParkReason;
  /** When it wakes, the session's stagger included; with a check, at the latest. */
  wakeAt: number;
  /** The backoff's step, when no time to wake was known. */
  backoffMs?: number;
  /** A shell check run at once and then every `everyMs`: the park wakes once it passes. */
  check?: { command: string; everyMs: number };
  /** Where the time came from, the agent's reason, the limit's message: the park's detail, and its audit row's. */
  detail: Record<string, unknown>;
  /** When the wait this park goes on with began (a run of limits); a new wait's is now. */
  since?: number;
}

/** Parked (`repark`: the session's park parked again in place, under its own id), or why not. */
export type ParkResult = { parked: true; id: string; repark: boolean } | { parked: false; because: "stopped" };

/** The terms `request` sets, whole: a park parked again keeps nothing of its earlier terms (a check not asked again). */
function termsOf(request: ParkRequest, now: number): ParkTerms {
  const { check } = request;
  return {
    reason: request.reason,
    parkedAt: now,
    wakeAt: request.wakeAt,
    backoffMs: request.backoffMs ?? null,
    checkCommand: check?.command ?? null,
    checkEveryMs: check?.everyMs ?? null,
    checkRuns: 0,
    // The first run at once: a wait that is already over costs nothing more.
    nextCheckAt: check ? now : null,
    detail: JSON.stringify(request.detail),
  };
}

export function park(scope: SessionScope, request: ParkRequest, now: number): Change<ParkResult> {
  return change("park", scope.sessionId, () => parkSession(scope, request, now));
}

/** The park of `request`, inside a change that may write more (a limit's error, park-limit.ts). */
export function* parkSession(scope: SessionScope, request: ParkRequest, now: number): Script<ParkResult> {
  const row = yield* q.session(scope.sessionId);
  if (row?.stoppedAt != null) return { parked: false, because: "stopped" };
  if (row?.recheckAt != null) yield* patchSession(withLook(row, TAKE), {}, now);
  const terms = termsOf(request, now);
  const parked = (parkId: string): AuditValues => {
    const check = request.check && { check: request.check };
    const detail = { parkId, until: request.wakeAt, ...request.detail, ...check };
    return auditRow(now, scope, { event: "parked", reason: request.reason, detail });
  };
  // A new park is the common case: written at once, and only when one holds already is that one read and parked again.
  const park = { ...scope, id: request.id, since: request.since ?? now, ...terms };
  if (yield* q.insertPark(park, parked(request.id))) return { parked: true, id: request.id, repark: false };
  const held = yield* q.parkOf(scope.sessionId);
  if (!held || !(yield* q.reparkPark(held.id, terms, parked(held.id))))
    throw new Error(`the park of ${scope.sessionId} was neither written nor found holding`);
  return { parked: true, id: held.id, repark: true };
}

/** A park's detail as written (`request.detail`), read back; {} for one that does not parse. */
export function parkDetail(park: Pick<ParkRow, "detail">): Record<string, unknown> {
  try {
    const detail: unknown = JSON.parse(park.detail ?? "{}");
    return detail !== null && typeof detail === "object" && !Array.isArray(detail)
      ? (detail as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
