// A provider's limit that failed a turn: the error recorded on the session and, as the limit's plan says
// (core/limits/limit-park.ts), the session parked until the limit lifts, in one transaction. A run of limits (no turn
// ended well since the last one, so the session's last error is still a limit) goes on from the session's latest
// park: the backoff takes its next step, and the cap on the wait counts from when the run began. A run that waited
// `maxParkHours` stops as a provider error, told as one.
import type { ErrorReport } from "../../core/errors.js";
import { planLimitPark, type LimitParkOptions, type LimitParkPlan } from "../../core/limits/limit-park.js";
import type { LimitReading } from "../../core/limits/read-limit.js";
import { afterSessionError } from "../../core/transitions.js";
import { change, q, type Change } from "../script.js";
import type { ParkRow } from "../schema.js";
import type { SessionScope } from "../types.js";
import { applyChange } from "./change-session.js";
import { parkDetail, parkSession } from "./park.js";

export interface LimitMet {
  /** The new park's id, should it be a new one. */
  id: string;
  error: ErrorReport;
  reading: LimitReading;
  options: LimitParkOptions;
}

export type LimitParkResult =
  | { parked: true; id: string; until: number }
  | { parked: false; because: "stopped" | "waited_too_long" | "billing" | "not_a_limit" };

/** The error name a run of limits that waited too long is recorded under (what `provider_error`'s row says). */
export const WAITED_TOO_LONG = "LimitWaitedTooLong";

/** Parks on limits that named no time before `park` in its run, counting itself if it was one. */
function unsaidParksThrough(park: ParkRow): number {
  // A detail that does not parse starts the count over.
  const said = parkDetail(park).unsaidParks;
  const before = typeof said === "number" && Number.isInteger(said) && said >= 0 ? said : 0;
  return before + (park.backoffMs !== null ? 1 : 0);
}

function detailOf(plan: Extract<LimitParkPlan, { kind: "park" }>, error: ErrorReport, unsaidParks: number) {
  return {
    ...(plan.reset ? { resetAt: plan.reset.at, resetFrom: plan.reset.source } : {}),
    ...(plan.backoffMs !== undefined ? { backoffMs: plan.backoffMs, unsaidParks } : {}),
    ...(plan.discarded ? { discarded: plan.discarded } : {}),
    staggerMs: plan.staggerMs,
    errorName: error.name ?? null,
    statusCode: error.statusCode ?? null,
    message: error.message?.slice(0, 300) ?? null,
  };
}

export function parkForLimit(scope: SessionScope, met: LimitMet, now: number): Change<LimitParkResult> {
  return change("park-limit", scope.sessionId, function* () {
    const before = yield* q.session(scope.sessionId);
    const last = before?.lastErrorKind === "limit" ? yield* q.lastParkOf(scope.sessionId) : undefined;
    const run = last?.reason === "limit" ? last : undefined;
    const unsaidParks = run ? unsaidParksThrough(run) : 0;
    const plan = planLimitPark(
      { reading: met.reading, now, sessionId: scope.sessionId, unsaidParks, parkingSince: run?.since },
      met.options,
    );
    const recorded = (row: Parameters<typeof afterSessionError>[3]) => afterSessionError("limit", met.error, now, row);
    if (plan.kind !== "park") {
      // Stopped as a permanent error: the provider_error guard holds the session and tells the person.
      const stop =
        plan.kind === "stop"
          ? {
              lastErrorKind: "permanent",
              ...(plan.why === "waited_too_long" ? { lastErrorName: WAITED_TOO_LONG } : {}),
            }
          : {};
      yield* applyChange(scope, now, (row) => ({ ...recorded(row), ...stop }));
      return { parked: false, because: plan.kind === "stop" ? plan.why : "not_a_limit" };
    }
    yield* applyChange(scope, now, recorded);
    const request = {
      id: met.id,
      reason: "limit" as const,
      wakeAt: plan.until,
      ...(plan.backoffMs !== undefined ? { backoffMs: plan.backoffMs } : {}),
      ...(run ? { since: run.since } : {}),
      detail: detailOf(plan, met.error, unsaidParks),
    };
    const parked = yield* parkSession(scope, request, now);
    return parked.parked ? { parked: true, id: parked.id, until: plan.until } : { parked: false, because: "stopped" };
  });
}
