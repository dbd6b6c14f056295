// LimitParks promises: a turn failed on a limit parks its session until the reset the provider named (read from its
// headers, body or words) plus the session's stagger, and says so on the engine's events; OpenCode's own wait to
// retry is recorded as a park only when it is long enough to matter, staggered too, and that park (only that kind)
// ends as `unparked: expired` when the retry starts. Over the engine's context and a real SQLite file; the whole
// engine parking, waking and continuing is test/engine/scenarios/parked.test.ts.
import { describe, expect, it } from "vitest";
import { park } from "../../../src/store/changes/park.js";
import { LimitParks, RETRY_PARK_MIN_MS } from "../../../src/engine/wait/limit-parks.js";
import { makeContext, rows, store, useTestFiles } from "../../support/engine-context.js";
import { DIRECTORY, testConfig } from "../../support/engine-fixture.js";

useTestFiles();

const S = "ses_limit";
const trail = () => rows.audit(S).map((r) => (r.reason ? `${r.event}:${r.reason}` : r.event));
const parks = () => rows.parks(S);

function limitParks(wakeJitterSeconds = 0) {
  const ctx = makeContext({ store, config: testConfig(":memory:", { wakeJitterSeconds }) });
  const parked: unknown[] = [];
  ctx.events.on("session_parked", (p) => parked.push(p));
  return { limits: new LimitParks(ctx), parked, ctx };
}

describe("LimitParks", () => {
  it("parks a session whose turn failed on a limit until the reset its headers name", async () => {
    const { limits, parked } = limitParks();
    const reset = Date.now() + 3 * 3_600_000;
    await limits.limitMet(S, {
      name: "APIError",
      statusCode: 429,
      message: "This request would exceed your account's rate limit.",
      responseHeaders: { "anthropic-ratelimit-tokens-reset": new Date(reset).toISOString() },
    });
    const [row] = parks();
    expect(row).toMatchObject({ reason: "limit", state: "parked" });
    expect(Number(row!.wake_at)).toBe(Math.floor(reset / 1000) * 1000);
    expect(row!.detail).toMatchObject({ resetFrom: { field: "anthropic-ratelimit-tokens-reset" }, statusCode: 429 });
    expect(parked).toEqual([{ sessionId: S, reason: "limit", until: Number(row!.wake_at) }]);
  });

  it("reads a reset said only in the error's words, and backs off on a limit that says none", async () => {
    const { limits } = limitParks();
    const before = Date.now();
    await limits.limitMet(S, { name: "APIError", message: "Usage limit reached. Try again in 2 hours." });
    expect(Number(parks()[0]!.wake_at) - before).toBeGreaterThanOrEqual(2 * 3_600_000);
    expect(parks()[0]!.detail).toMatchObject({ resetFrom: { text: expect.stringMatching(/2 hours/) } });
    await limits.limitMet("ses_other", { name: "APIError", statusCode: 429, message: "Too Many Requests" });
    expect(rows.parks("ses_other")[0]).toMatchObject({ backoff_ms: 120_000 });
  });

  it("records OpenCode's long waits to retry, each session at its point of the stagger window", async () => {
    const { limits } = limitParks(60);
    const next = Date.now() + 40_000;
    expect(limits.retryScheduled(S, { attempt: 1, next: Date.now() + RETRY_PARK_MIN_MS - 1000 })).toBeUndefined();
    expect(limits.retryScheduled(S, { attempt: 1 })).toBeUndefined();
    await limits.retryScheduled(S, { attempt: 2, message: "Too Many Requests", next });
    const [row] = parks();
    expect(row).toMatchObject({ reason: "opencode_retry", detail: { attempt: 2, next } });
    expect(Number(row!.wake_at)).toBeGreaterThanOrEqual(next);
    expect(Number(row!.wake_at)).toBeLessThan(next + 60_000);
    await limits.retryScheduled("ses_b", { attempt: 1, next });
    expect(rows.parks("ses_b")[0]!.wake_at).not.toBe(row!.wake_at);
  });

  it("ends the retry's park when the retry starts, and no other park", async () => {
    const { limits } = limitParks();
    expect(limits.turnRunning(S)).toBeUndefined();
    await limits.retryScheduled(S, { attempt: 1, next: Date.now() + 40_000 });
    await limits.turnRunning(S);
    expect(trail()).toEqual(["parked:opencode_retry", "unparked:expired"]);
    // The agent's own park, made while the retry was recorded, is not OpenCode's to end.
    await limits.retryScheduled(S, { attempt: 1, next: Date.now() + 40_000 });
    const scope = { sessionId: S, directory: DIRECTORY, server: null };
    const agent = { id: "park_agent", reason: "agent" as const, wakeAt: Date.now() + 60_000, detail: {} };
    await store.change(park(scope, agent, Date.now()));
    await limits.turnRunning(S);
    expect(trail().slice(-2)).toEqual(["parked:opencode_retry", "parked:agent"]);
    expect(parks().at(-1)).toMatchObject({ state: "parked", reason: "agent" });
  });
});
