// ParkToasts promises: one toast when a session parks, saying until when (the clock time and how long from now) and
// why; none when toasts are off.
import { describe, expect, it } from "vitest";
import { parkToastText, ParkToasts } from "../../../src/engine/wait/park-toasts.js";
import { makeContext, store, useTestFiles } from "../../support/engine-context.js";
import { testConfig } from "../../support/engine-fixture.js";
import { FakeHost } from "../../support/fake-host.js";

useTestFiles();

describe("ParkToasts", () => {
  it("says until when and why, once per park", async () => {
    const host = new FakeHost();
    const toasts = new ParkToasts(makeContext({ store, host, config: testConfig(":memory:") }));
    const until = Date.now() + 2 * 3_600_000 + 13 * 60_000;
    toasts.parked({ sessionId: "ses_1", reason: "limit", until });
    await expect.poll(() => host.toasts.length).toBe(1);
    expect(host.toasts[0]).toMatchObject({ variant: "info", durationMs: 8000 });
    expect(host.toasts[0]!.message).toMatch(
      /^Parked until \d\d:\d\d( [AP]M)? \(in 2 h 1[23] min\): the provider.s limit lifts then\.$/,
    );
  });

  it("names each reason in words", () => {
    const now = Date.now();
    expect(parkToastText("agent", now + 30 * 60_000, now)).toMatch(/\(in 30 min\): as the agent asked\.$/);
    expect(parkToastText("opencode_retry", now + 40_000, now)).toMatch(/\(in 40 s\): OpenCode retries then\.$/);
  });

  it("shows nothing with toasts off", async () => {
    const host = new FakeHost();
    const ctx = makeContext({ store, host, config: testConfig(":memory:", { toast: false }) });
    new ParkToasts(ctx).parked({ sessionId: "ses_1", reason: "agent", until: Date.now() + 60_000 });
    await Promise.all(ctx.tracked);
    expect(host.toasts).toEqual([]);
  });
});
