// createContext promises: the context hands every part the same infrastructure it was made of; scope() places a
// session in the directory and server the engine follows; changeSession() takes the time when it is called and writes
// the change in the session's lane, after the session's earlier jobs and before its later ones (other sessions do not
// wait), its failure going to the lanes' report and never thrown; log() passes a line to OpenCode and never throws,
// even when OpenCode's log does; failed() is the `failure` engine event; track() keeps a background job in `tracked`
// until it settles and reports a rejected one as the failure of a "background job", resolving with undefined.
// Built here from the real parts over a real SQLite file, with a clock the test moves by hand.
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { Config } from "../../src/config/resolve.js";
import type { Clock } from "../../src/engine/clock.js";
import { createContext, type ContextParts, type EngineContext } from "../../src/engine/context.js";
import { EngineEmitter } from "../../src/engine/engine-events.js";
import { Lifecycle } from "../../src/engine/lifecycle.js";
import { SessionLanes } from "../../src/engine/session-lanes.js";
import { TimerQueue } from "../../src/engine/timer-queue.js";
import { deferred } from "../support/deferred.js";
import { folder, rows, store, useTestFiles } from "../support/engine-context.js";
import { testConfig } from "../support/engine-fixture.js";
import { FakeHost } from "../support/fake-host.js";
import { START } from "../support/fake-time.js";
import { failChangeOnce } from "../support/store-spies.js";
import { turn } from "../support/wait-for.js";

const S = "ses_context";
const OTHER = "ses_other";

let config: Config;

/** A wall clock the test sets. */
class HandClock implements Clock {
  wall = START.getTime();
  mono = 0;
  now = () => this.wall;
  monotonic = () => this.mono;
}

interface Rig {
  ctx: EngineContext;
  parts: ContextParts;
  clock: HandClock;
  host: FakeHost;
  failures: Array<{ operation: string; error: unknown }>;
  laneErrors: unknown[];
}

function build(followed: ContextParts["followed"] = { directory: "/work/project", server: null }): Rig {
  const clock = new HandClock();
  const host = new FakeHost();
  const events = new EngineEmitter(() => undefined);
  const failures: Rig["failures"] = [];
  const laneErrors: unknown[] = [];
  const parts: ContextParts = {
    config,
    followed,
    owner: "host/1/owner",
    clock,
    store,
    host,
    timers: new TimerQueue(clock),
    lanes: new SessionLanes((error) => laneErrors.push(error)),
    lifecycle: new Lifecycle(),
    events,
    failed: (operation, error) => void failures.push({ operation, error }),
  };
  return { ctx: createContext(parts), parts, clock, host, failures, laneErrors };
}

useTestFiles({ fakeTime: false });
beforeEach(() => {
  config = testConfig(join(folder, "state.db"));
});

describe("the parts", () => {
  it("every part the context was made of is the one it hands out", () => {
    const { ctx, parts } = build();
    for (const key of Object.keys(parts) as Array<keyof ContextParts>) expect(ctx[key]).toBe(parts[key]);
  });
});

describe("scope()", () => {
  it("places a session in the followed directory, on this machine's own server", () => {
    const { ctx } = build({ directory: "/work/project", server: null });
    expect(ctx.scope(S)).toEqual({ sessionId: S, directory: "/work/project", server: null });
  });

  it("places a session on the followed server when one database serves several", () => {
    const { ctx } = build({ directory: "/srv/app", server: "opencode-2" });
    expect(ctx.scope(S)).toEqual({ sessionId: S, directory: "/srv/app", server: "opencode-2" });
    expect(ctx.scope(OTHER)).toEqual({ sessionId: OTHER, directory: "/srv/app", server: "opencode-2" });
  });
});

describe("changeSession()", () => {
  it("writes the change to the session's row in the followed scope, and resolves with the row as written", async () => {
    const { ctx } = build({ directory: "/srv/app", server: "opencode-2" });
    const written = await ctx.changeSession(S, { agent: "plan", continuations: 2 });
    expect(rows.session(S)).toMatchObject({
      session_id: S,
      directory: "/srv/app",
      server: "opencode-2",
      agent: "plan",
      continuations: 2,
    });
    expect(written).toMatchObject({ sessionId: S, agent: "plan", continuations: 2 });
  });

  it("waits for the session's earlier jobs in its lane; another session's change does not wait", async () => {
    const { ctx } = build();
    const gate = deferred();
    const earlier = ctx.lanes.run(S, () => gate.promise);
    const change = ctx.changeSession(S, { agent: "plan" });
    await ctx.changeSession(OTHER, { agent: "build" });
    await turn();
    expect(rows.session(OTHER)).toMatchObject({ agent: "build" });
    expect(rows.session(S)).toBeUndefined();
    gate.resolve();
    await earlier;
    await change;
    expect(rows.session(S)).toMatchObject({ agent: "plan" });
  });

  it("changes are written in the order they were asked for, and a change of the row sees the one before it", async () => {
    const { ctx } = build();
    const gate = deferred();
    void ctx.lanes.run(S, () => gate.promise);
    const seen: number[] = [];
    const first = ctx.changeSession(S, { continuations: 5 });
    const second = ctx.changeSession(S, (row) => {
      seen.push(row.continuations);
      return { continuations: row.continuations + 1 };
    });
    const third = ctx.changeSession(S, (row) => {
      seen.push(row.continuations);
      return { continuations: row.continuations * 10 };
    });
    gate.resolve();
    await Promise.all([first, second, third]);
    expect(seen).toEqual([5, 6]);
    expect(rows.session(S)).toMatchObject({ continuations: 60 });
  });

  it("takes the time when it is called, not when its turn in the lane comes", async () => {
    const { ctx, clock } = build();
    const gate = deferred();
    void ctx.lanes.run(S, () => gate.promise);
    const calledAt = clock.wall;
    const change = ctx.changeSession(S, { agent: "plan" });
    clock.wall += 60_000;
    gate.resolve();
    await change;
    expect(rows.session(S)).toMatchObject({ created_at: calledAt, updated_at: calledAt });
  });

  it("a change that cannot be written is reported to the lanes, never thrown, and the lane goes on", async () => {
    const { ctx, laneErrors } = build();
    const broken = new Error("disk I/O error");
    const restore = failChangeOnce(store, "change-session", broken);
    try {
      await expect(ctx.changeSession(S, { agent: "plan" })).resolves.toBeUndefined();
      expect(laneErrors).toEqual([broken]);
      expect(rows.session(S)).toBeUndefined();
      await ctx.changeSession(S, { agent: "build" });
      expect(rows.session(S)).toMatchObject({ agent: "build" });
    } finally {
      restore();
    }
  });
});

describe("log()", () => {
  it("passes the line to OpenCode's log as it is", () => {
    const { ctx, host } = build();
    ctx.log("warn", "continuation failed", { sessionId: S });
    ctx.log("info", "no extra");
    expect(host.logs).toEqual([
      { level: "warn", message: "continuation failed", extra: { sessionId: S } },
      { level: "info", message: "no extra", extra: undefined },
    ]);
  });

  it("never throws, even when OpenCode's log throws", () => {
    const { ctx, host } = build();
    let calls = 0;
    host.log = () => {
      calls++;
      throw new Error("the log is gone");
    };
    expect(() => ctx.log("error", "something", { a: 1 })).not.toThrow();
    expect(() => ctx.log("info", "again")).not.toThrow();
    expect(calls).toBe(2);
  });
});

describe("failed()", () => {
  it("emits the `failure` engine event with the operation and the error itself", () => {
    const { ctx, failures } = build();
    const error = new Error("boom");
    ctx.failed("event handling", error);
    ctx.failed("timer x", "not an Error");
    expect(failures).toEqual([
      { operation: "event handling", error },
      { operation: "timer x", error: "not an Error" },
    ]);
    expect(failures[0]!.error).toBe(error);
  });
});

describe("track()", () => {
  it("keeps a job in `tracked` until it resolves, and resolves with its value", async () => {
    const { ctx, failures } = build();
    const job = deferred<string>();
    const kept = ctx.track(job.promise);
    expect(ctx.tracked.size).toBe(1);
    expect(ctx.tracked.has(kept)).toBe(true);
    await turn();
    expect(ctx.tracked.size).toBe(1);
    job.resolve("done");
    await expect(kept).resolves.toBe("done");
    expect(ctx.tracked.size).toBe(0);
    expect(failures).toEqual([]);
  });

  it("a job that rejects is reported as the failure of a background job, resolves with undefined, and leaves `tracked`", async () => {
    const { ctx, failures } = build();
    const job = deferred<string>();
    const kept = ctx.track(job.promise);
    await turn();
    expect(ctx.tracked.size).toBe(1);
    expect(failures).toEqual([]);
    const error = new Error("store locked");
    job.reject(error);
    await expect(kept).resolves.toBeUndefined();
    expect(failures).toEqual([{ operation: "background job", error }]);
    expect(failures[0]!.error).toBe(error);
    expect(ctx.tracked.size).toBe(0);
  });

  it("keeps each of several jobs until that one settles", async () => {
    const { ctx } = build();
    const a = deferred();
    const b = deferred();
    const keptA = ctx.track(a.promise);
    const keptB = ctx.track(b.promise);
    expect([...ctx.tracked]).toEqual([keptA, keptB]);
    b.reject(new Error("b failed"));
    await keptB;
    expect([...ctx.tracked]).toEqual([keptA]);
    a.resolve();
    await keptA;
    expect(ctx.tracked.size).toBe(0);
  });
});
