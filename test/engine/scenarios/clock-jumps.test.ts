// The wall clock jumping by hours, during a countdown and across a restart: waits are monotonic, so nothing fires in
// a burst and no countdown lasts longer than its own duration (plus the scheduler's tolerance).
import { describe, expect, it, vi } from "vitest";
import { ev } from "../../support/events.js";
import { advance, useFakeTime } from "../../support/fake-time.js";
import { FakeHost } from "../../support/fake-host.js";
import { startEngine, tempFolder, type EngineFixture } from "../../support/engine-fixture.js";

const HOURS = 3 * 3_600_000;
const fixtures: EngineFixture[] = [];
const jump = (ms: number) => vi.setSystemTime(Date.now() + ms);

useFakeTime(() => fixtures.splice(0));

function host(sessions: string[]) {
  const h = new FakeHost();
  for (const s of sessions) {
    h.setTodos(s, [["a", "pending"]]);
    h.addUserMessage(s, "go");
  }
  return h;
}

async function engine(h: FakeHost, folder?: string, config = {}) {
  const f = await startEngine({ host: h, folder, config: { countdownSeconds: 10, toast: false, ...config } });
  fixtures.push(f);
  return f;
}

const sessions = Array.from({ length: 20 }, (_, i) => `ses_clock_${i}`);

describe.each([
  ["forward", HOURS],
  ["backward", -HOURS],
])("the wall clock jumping %s by 3 hours during countdowns", (_name, delta) => {
  it("fires each countdown once, at its own time, with no burst", async () => {
    const h = host(sessions);
    const f = await engine(h);
    const armedAt = new Map<string, number>();
    const waited: number[] = [];
    const prompt = h.prompt.bind(h);
    h.prompt = async (request, signal) => {
      waited.push(performance.now() - armedAt.get(request.sessionId)!);
      await prompt(request, signal);
    };
    // Armed over one second (50 ms apart).
    for (const s of sessions) {
      armedAt.set(s, performance.now());
      f.enforcer.handleEvent(ev.idle(s));
      await advance(50);
    }
    jump(delta);
    await advance(7000);
    await f.enforcer.settled();
    // 8 s after the first arming: none of the 10 s countdowns may have fired, whatever the wall clock says.
    expect(h.prompts).toEqual([]);
    await advance(2100);
    await f.enforcer.settled();
    // The first ones (armed at 0–50 ms) are due; the last ones (armed at ~950 ms) are not yet.
    expect(h.prompts.length).toBeGreaterThan(0);
    expect(h.prompts.length).toBeLessThan(20);
    await advance(1000);
    await f.enforcer.settled();
    expect(h.prompts).toHaveLength(20);
    expect(Math.min(...waited)).toBeGreaterThanOrEqual(10_000);
    expect(Math.max(...waited)).toBeLessThanOrEqual(10_000 + 150);
    console.log(
      `clock jump ${delta > 0 ? "+" : ""}${delta / 3_600_000} h: 20 countdowns of 10 s sent after ${Math.min(...waited)}–${Math.max(...waited)} ms (monotonic), no burst`,
    );
    await advance(60_000);
    await f.enforcer.settled();
    expect(h.prompts).toHaveLength(20);
  });
});

describe("the wall clock jumping across a restart", () => {
  it("forward past the resume window: everything expires, nothing is sent", async () => {
    const folder = tempFolder();
    const h = host(sessions);
    const first = await engine(h, folder);
    for (const s of sessions) first.enforcer.handleEvent(ev.idle(s));
    await advance(100);
    await first.close();
    jump(HOURS);
    const second = await engine(h, folder);
    await advance(20_000);
    await second.enforcer.settled();
    expect(h.prompts).toEqual([]);
    expect(second.rows.countdowns().every((c) => c.state === "expired")).toBe(true);
  });

  it("backward: no countdown waits longer than its duration, and each fires once", async () => {
    const folder = tempFolder();
    const h = host(sessions);
    const first = await engine(h, folder);
    for (const s of sessions) first.enforcer.handleEvent(ev.idle(s));
    await advance(100);
    await first.close();
    jump(-HOURS);
    const second = await engine(h, folder);
    await advance(10_000 + 50);
    await second.enforcer.settled();
    expect(h.prompts).toHaveLength(20);
    const resumed = second.rows.audit().filter((r) => r.event === "resumed");
    expect(resumed.every((r) => (r.detail.remainingMs as number) <= 10_000)).toBe(true);
  });

  it("a backoff recorded before the clock went back does not hold a new idle for hours", async () => {
    const h = host(["ses_b"]);
    const f = await engine(h, undefined, { countdownSeconds: 0.1, retryBaseMs: 5000, maxRetries: 1 });
    h.promptScript = ["fail"];
    f.enforcer.handleEvent(ev.idle("ses_b"));
    await advance(600); // the countdown, the failed call, and its look-up in the session (300 ms)
    await f.enforcer.settled();
    jump(-HOURS);
    await advance(5100);
    await f.enforcer.settled();
    // The retry countdown fired on its monotonic schedule despite the jump.
    expect(h.calls.prompt).toBe(2);
    h.promptScript = [];
    f.enforcer.handleEvent(ev.idle("ses_b"));
    await advance(200);
    await f.enforcer.settled();
    expect(f.rows.audit("ses_b").map((r) => r.reason)).not.toContain("backoff");
  });
});
