import { describe, expect, it } from "vitest";
import {
  BACKOFF_CAP_MS,
  BACKOFF_START_MS,
  backoffMs,
  planLimitPark,
  staggerOf,
  type LimitParkFacts,
} from "../../../src/core/limits/limit-park.js";

const NOW = Date.UTC(2026, 11, 7, 12, 0, 0);
const HOUR = 3_600_000;
const options = { maxParkHours: 6, wakeJitterSeconds: 120 };
const facts = (over: Partial<LimitParkFacts>): LimitParkFacts => ({
  reading: { kind: "lifts_unsaid" },
  now: NOW,
  sessionId: "ses_a",
  unsaidParks: 0,
  ...over,
});
const stagger = staggerOf("ses_a", 120_000);

describe("parking on a provider's limit", () => {
  it("no limit: nothing for the park to do", () => {
    expect(planLimitPark(facts({ reading: { kind: "not_a_limit" } }), options)).toEqual({ kind: "not_a_limit" });
  });

  it("billing stops at once, whatever else the error said", () => {
    expect(planLimitPark(facts({ reading: { kind: "billing", why: "insufficient_quota" } }), options)).toEqual({
      kind: "stop",
      why: "billing",
      sign: "insufficient_quota",
    });
  });

  it("a named reset: parked until it, plus the session's own stagger", () => {
    const source = { field: "retry-after" };
    expect(planLimitPark(facts({ reading: { kind: "lifts_at", at: NOW + 40_000, source } }), options)).toEqual({
      kind: "park",
      until: NOW + 40_000 + stagger,
      reset: { at: NOW + 40_000, source },
      staggerMs: stagger,
    });
  });

  it("a reset a few seconds past (clocks differ) wakes after the stagger alone", () => {
    const source = { text: "resets at 11:59" };
    const plan = planLimitPark(facts({ reading: { kind: "lifts_at", at: NOW - 30_000, source } }), options);
    expect(plan).toMatchObject({ kind: "park", until: NOW + stagger });
  });

  it("a reset long past, or beyond maxParkHours, is not trusted: the backoff, saying which and why", () => {
    const source = { text: "2026-12-01 00:00" };
    expect(planLimitPark(facts({ reading: { kind: "lifts_at", at: NOW - HOUR, source } }), options)).toEqual({
      kind: "park",
      until: NOW + BACKOFF_START_MS + stagger,
      backoffMs: BACKOFF_START_MS,
      staggerMs: stagger,
      discarded: { at: NOW - HOUR, source, why: "in_the_past" },
    });
    const far = planLimitPark(facts({ reading: { kind: "lifts_at", at: NOW + 7 * HOUR, source } }), options);
    expect(far).toMatchObject({ backoffMs: BACKOFF_START_MS, discarded: { why: "beyond_max_park" } });
  });

  it("a limit that names no time: a backoff from minutes, doubling at each park in a row, capped", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 50].map(backoffMs)).toEqual([
      2 * 60_000,
      4 * 60_000,
      8 * 60_000,
      16 * 60_000,
      32 * 60_000,
      BACKOFF_CAP_MS,
      BACKOFF_CAP_MS,
      BACKOFF_CAP_MS,
    ]);
    expect(planLimitPark(facts({ unsaidParks: 3 }), options)).toMatchObject({ until: NOW + 16 * 60_000 + stagger });
  });

  it("maxParkHours counts from the run's first park: the last wait ends at it, the look after it stops", () => {
    const since = NOW - 5.9 * HOUR;
    expect(planLimitPark(facts({ parkingSince: since, unsaidParks: 9 }), options)).toMatchObject({
      kind: "park",
      until: since + 6 * HOUR,
    });
    const source = { field: "retry-after" };
    expect(
      planLimitPark(facts({ parkingSince: since, reading: { kind: "lifts_at", at: NOW + HOUR, source } }), options),
    ).toMatchObject({ discarded: { why: "beyond_max_park" } });
    expect(planLimitPark(facts({ parkingSince: NOW - 6 * HOUR }), options)).toEqual({
      kind: "stop",
      why: "waited_too_long",
      since: NOW - 6 * HOUR,
    });
  });

  it("the stagger is the session's own, the same in every process, and spreads 500 sessions over the window", () => {
    expect(staggerOf("ses_a", 120_000)).toBe(stagger);
    expect(staggerOf("ses_a", 0)).toBe(0);
    const seconds = new Set(Array.from({ length: 500 }, (_, i) => Math.floor(staggerOf(`ses_${i}`, 120_000) / 1000)));
    // 500 sessions over 120 one-second slots: nearly every slot used, none crowded by all.
    expect(seconds.size).toBeGreaterThan(110);
    const perSecond = new Map<number, number>();
    for (let i = 0; i < 500; i++) {
      const s = Math.floor(staggerOf(`ses_${i}`, 120_000) / 1000);
      perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
    }
    expect(Math.max(...perSecond.values())).toBeLessThan(15);
  });
});
