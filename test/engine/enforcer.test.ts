// Enforcer (src/engine/enforcer.ts), the composition root: dispose stops the parts in order (the notice sender, the
// retention schedule and the lease loop, each waited for, before the countdowns are handed back and the store may
// close; the attempt running is recorded, those waiting for the global cap are handed back to the database); every
// dispose() is the same stop, a dispose during the start waits for it and leaves nothing ticking, and a start once
// disposed is refused; and OpenCode's events and tool calls,
// however malformed, are ignored and counted, never thrown. What the engine decides for a session, behaviour by
// behaviour, is in scenarios/. A real engine on a real database, OpenCode played by a scripted host.
import { afterEach, describe, expect, it, vi } from "vitest";
import { LeaseLoop } from "../../src/engine/lease-loop.js";
import { NoticeSender } from "../../src/engine/notice-sender.js";
import { RetentionSchedule } from "../../src/engine/retention-schedule.js";
import { Countdowns } from "../../src/engine/wait/countdowns.js";
import { startEngine } from "../support/engine-fixture.js";
import { advance, until } from "../support/fake-time.js";
import { gateHeartbeats } from "../support/store-spies.js";
import { boot, f, idle, S, useOneSession } from "./scenarios/one-session.js";

useOneSession();

afterEach(() => {
  vi.restoreAllMocks();
});

/** Writes into `order` when each part is asked to stop and when its stop is over. */
function watchStops(order: string[]): void {
  const parts = [
    ["sender", NoticeSender.prototype],
    ["retention", RetentionSchedule.prototype],
    ["leases", LeaseLoop.prototype],
  ] as const;
  for (const [name, prototype] of parts) {
    const stop = prototype.stop;
    vi.spyOn(prototype, "stop").mockImplementation(async function (this: typeof prototype) {
      order.push(`${name} asked`);
      await stop.call(this);
      order.push(`${name} stopped`);
    });
  }
  const release = Countdowns.prototype.release;
  vi.spyOn(Countdowns.prototype, "release").mockImplementation(async function (this: Countdowns) {
    await release.call(this);
    order.push("countdowns handed back");
  });
}

describe("start and stop", () => {
  it("dispose stops each part itself, in order, each waited for, before the store may close", async () => {
    const order: string[] = [];
    watchStops(order);
    await boot({ retentionDays: 30 });
    const close = f.port.close.bind(f.port);
    f.port.close = async () => {
      order.push("store closed");
      await close();
    };
    await f.close();
    expect(order).toEqual([
      "sender asked",
      "sender stopped",
      "retention asked",
      "retention stopped",
      "leases asked",
      "leases stopped",
      "countdowns handed back",
      "store closed",
    ]);
  });

  it("two dispose() at once are one stop: each resolves only once the enforcer is disposed", async () => {
    await boot();
    const first = f.enforcer.dispose().then(() => f.enforcer.stats().mode);
    const second = f.enforcer.dispose().then(() => f.enforcer.stats().mode);
    expect(f.enforcer.stats().mode).toBe("disposing");
    expect(await Promise.all([first, second])).toEqual(["disposed", "disposed"]);
  });

  it("a start once disposed is refused", async () => {
    await boot();
    await f.enforcer.dispose();
    await expect(f.enforcer.start()).rejects.toThrow("the enforcer was stopped: it cannot start again");
  });

  it("a dispose during the start waits for it, then stops what it started: nothing ticks after", async () => {
    const order: string[] = [];
    watchStops(order);
    const engine = await startEngine({ start: false, config: { retentionDays: 30 } });
    try {
      // The first heartbeat of the start is slow: the dispose comes while the start waits for it.
      const slow = gateHeartbeats(engine.port);
      const starting = engine.enforcer.start().then(() => void order.push("start over"));
      const disposing = engine.enforcer.dispose();
      slow.open();
      // Fake time moves on only when told, and PostgreSQL's calls need it to (fake-time.ts `advance`).
      let over = false;
      void Promise.all([starting, disposing]).then(() => (over = true));
      await until(() => over);
      expect(order.filter((step) => step === "start over" || step.endsWith("stopped"))).toEqual([
        "start over",
        "sender stopped",
        "retention stopped",
        "leases stopped",
      ]);
      let beats = 0;
      const heartbeat = engine.port.heartbeat.bind(engine.port);
      engine.port.heartbeat = (...args) => {
        beats++;
        return heartbeat(...args);
      };
      await advance(10 * engine.config.leaseMs);
      expect(beats).toBe(0);
      expect(engine.enforcer.stats().timers).toBe(0);
    } finally {
      await engine.destroy();
    }
  });
});

describe("shutdown", () => {
  it("with more continuations due than the global cap: the running one is recorded, the waiting ones handed back", async () => {
    await boot({ maxConcurrentInjections: 1, promptTimeoutMs: 5000 });
    const sessions = [S, "ses_two", "ses_three"];
    for (const id of sessions) {
      f.host.addUserMessage(id, "build the thing", { agent: "build", providerId: "scripted", modelId: "model-1" });
      f.host.setTodos(id, [["a", "pending"]]);
    }
    f.host.promptScript = ["hang"];
    for (const id of sessions) await idle(id);
    await advance(2100);
    // One prompt call runs (and hangs); the other two wait for the global cap. (Not settled: the call hangs.)
    expect(f.host.calls.prompt).toBe(1);
    let disposed = false;
    const disposing = f.enforcer.dispose().then(() => (disposed = true));
    // Time goes on (the hanging call times out, its answer is looked for); shutdown must end within it.
    for (let waited = 0; !disposed && waited < 60_000; waited += 1000) await advance(1000);
    expect(disposed).toBe(true);
    await disposing;
    expect(f.host.calls.prompt).toBe(1);
    const waiting = sessions.flatMap((id) => f.rows.countdowns(id)).filter((c) => c.state === "armed");
    expect(waiting).toHaveLength(2);
    expect(waiting.every((c) => c.owner === null)).toBe(true);
    expect(sessions.flatMap((id) => f.rows.injections(id))).toHaveLength(1);
  });
});

describe("hostile input", () => {
  it("malformed events are ignored and counted, never thrown", async () => {
    await boot();
    const junk: unknown[] = [
      null,
      1,
      "x",
      [],
      {},
      { type: "session.idle" },
      { type: "message.part.delta" },
      { type: "message.part.updated", properties: { part: 3 } },
      { type: "message.part.delta", properties: null },
    ];
    for (const event of junk) expect(() => f.enforcer.handleEvent(event)).not.toThrow();
    expect(f.enforcer.stats().eventsIgnored).toBeGreaterThanOrEqual(3);
    expect(() => f.enforcer.toolActivity(undefined, "before")).not.toThrow();
  });
});
