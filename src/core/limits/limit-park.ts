// What a provider's limit asks of the enforcer: park the session until the limit lifts (plus the session's stagger),
// stop at once (billing, or waited long enough), or nothing (no limit: the usual error rules). Pure: the reading of
// the error, the session's parks so far and the time in; a plan out, which the park's change script carries out.
import type { LimitReading, ResetSource } from "./read-limit.js";

export interface LimitParkOptions {
  /** The longest a session waits on limits, counted from the first park of a run of them. */
  maxParkHours: number;
  /** Each session wakes this much after the reset at most, at a point of its own (`staggerMs`). */
  wakeJitterSeconds: number;
}

export interface LimitParkFacts {
  reading: LimitReading;
  now: number;
  sessionId: string;
  /** Parks in a row on limits that named no time: the backoff's step. */
  unsaidParks: number;
  /** When this run of limit parks began, if one is under way. */
  parkingSince?: number;
}

/** A reset the reading named but the plan did not trust, and why (kept in the audit row's detail). */
export interface DiscardedReset {
  at: number;
  source: ResetSource;
  why: "in_the_past" | "beyond_max_park";
}

export type LimitParkPlan =
  | { kind: "not_a_limit" }
  | { kind: "stop"; why: "billing"; sign: string }
  | { kind: "stop"; why: "waited_too_long"; since: number }
  | {
      kind: "park";
      until: number;
      /** The reset and where it was read, when the limit named one the plan trusts. */
      reset?: { at: number; source: ResetSource };
      /** The backoff waited instead, when it named none (or one not trusted). */
      backoffMs?: number;
      discarded?: DiscardedReset;
      staggerMs: number;
    };

/** The first wait on a limit that names no time, doubled at each park in a row, up to the cap. */
export const BACKOFF_START_MS = 2 * 60_000;
export const BACKOFF_CAP_MS = 60 * 60_000;
/** A reset this little in the past is a clock's skew, not nonsense: the limit has lifted, wake now. */
const SKEW_MS = 60_000;

/**
 * A session's own point in the stagger window, the same at every park and in every process (FNV-1a of its id): 500
 * sessions parked to one reset wake spread over the window, not in the same second.
 */
export function staggerOf(sessionId: string, windowMs: number): number {
  if (windowMs <= 0) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < sessionId.length; i++) hash = Math.imul(hash ^ sessionId.charCodeAt(i), 0x01000193) >>> 0;
  return hash % Math.floor(windowMs);
}

export function backoffMs(unsaidParks: number): number {
  return Math.min(BACKOFF_CAP_MS, BACKOFF_START_MS * 2 ** Math.max(0, Math.min(unsaidParks, 30)));
}

export function planLimitPark(facts: LimitParkFacts, options: LimitParkOptions): LimitParkPlan {
  const { reading, now } = facts;
  if (reading.kind === "not_a_limit") return { kind: "not_a_limit" };
  if (reading.kind === "billing") return { kind: "stop", why: "billing", sign: reading.why };
  const maxMs = options.maxParkHours * 3_600_000;
  const since = facts.parkingSince ?? now;
  const deadline = since + maxMs;
  if (now >= deadline) return { kind: "stop", why: "waited_too_long", since };
  const staggerMs = staggerOf(facts.sessionId, options.wakeJitterSeconds * 1000);

  let discarded: DiscardedReset | undefined;
  if (reading.kind === "lifts_at") {
    const { at, source } = reading;
    if (at < now - SKEW_MS) discarded = { at, source, why: "in_the_past" };
    else if (at > deadline) discarded = { at, source, why: "beyond_max_park" };
    else return { kind: "park", until: Math.max(at, now) + staggerMs, reset: { at, source }, staggerMs };
  }
  const wait = backoffMs(facts.unsaidParks);
  // The last backoff ends at the deadline, where the next look stops the wait.
  const until = Math.min(now + wait + staggerMs, deadline);
  return { kind: "park", until, backoffMs: wait, staggerMs, ...(discarded ? { discarded } : {}) };
}
