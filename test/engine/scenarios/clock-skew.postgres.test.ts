// Replicas on hosts whose clocks disagree, sharing one PostgreSQL database: what answered an idle (a continuation
// another replica fired, the person's key in another process) is judged by the database's clock, so a skew of 30 s
// neither doubles a continuation nor drops one, and the key is honoured. SQLite is one machine with one clock.
import { afterEach, describe, expect, it } from "vitest";
import type { Clock } from "../../../src/engine/clock.js";
import { cancelByKey } from "../../../src/store/changes/cancel-by-key.js";
import { ev } from "../../support/events.js";
import { advance, useFakeTime } from "../../support/fake-time.js";
import { FakeHost } from "../../support/fake-host.js";
import { DIRECTORY, startEngine, tempFolder, type EngineFixture } from "../../support/engine-fixture.js";
import { openTestDatabase } from "../../support/test-database.js";

const S = "ses_skew";
const SKEW_MS = 30_000;
const fixtures: EngineFixture[] = [];

/** This machine's (fake) clock, moved by `offsetMs`: another host's. */
const skewed = (offsetMs: number): Clock => ({
  now: () => Date.now() + offsetMs,
  monotonic: () => performance.now(),
});

async function engine(folder: string, host: FakeHost, offsetMs = 0) {
  const f = await startEngine({
    folder,
    host,
    backend: "postgres",
    clock: skewed(offsetMs),
    config: { countdownSeconds: 10, resumeWindowSeconds: 60 },
  });
  fixtures.push(f);
  return f;
}

function newHost() {
  const host = new FakeHost();
  host.setTodos(S, [
    ["a", "pending"],
    ["b", "pending"],
  ]);
  host.addUserMessage(S, "go");
  return host;
}

useFakeTime();
afterEach(async () => {
  for (const f of fixtures.splice(0)) await f.destroy();
});

describe("two replicas whose clocks are 30 s apart, on one PostgreSQL database", () => {
  // B's look at an idle is still reading OpenCode when A's continuation answers that idle. A's clock is behind:
  // by the clocks, A fired before the idle began.
  it("a continuation fired by the replica whose clock is behind still answers the other's idle: not doubled", async () => {
    const folder = tempFolder();
    const hostA = newHost();
    const hostB = newHost();
    hostA.autoReply = false;
    hostA.onAccepted = () => void (hostA.statuses[S] = "busy");
    hostB.todoDelayMs = 9500;
    hostB.statusBehaviour = "fail";
    const a = await engine(folder, hostA, -SKEW_MS);
    const b = await engine(folder, hostB);
    a.enforcer.handleEvent(ev.idle(S)); // A arms; its countdown ends 10 s later
    await advance(1000);
    b.enforcer.handleEvent(ev.idle(S)); // B's look at the same idle answers after A fired
    await advance(40_000);
    await a.enforcer.settled();
    await b.enforcer.settled();
    expect(hostA.prompts.length + hostB.prompts.length).toBe(1);
    expect(a.rows.trail(S)).toEqual(["armed", "fired", "injected", "skipped:in_flight"]);
  });

  // The continuation's turn ended and the session went idle again: a new idle, which B sees. A's clock is ahead: by
  // the clocks, A fired after that idle began.
  it("a new idle after a continuation fired by the replica whose clock is ahead is judged anew: not dropped", async () => {
    const folder = tempFolder();
    const host = newHost();
    const a = await engine(folder, host, SKEW_MS);
    const b = await engine(folder, host);
    a.enforcer.handleEvent(ev.idle(S));
    await advance(11_000); // A's countdown fired at 10 s; OpenCode answered it
    await a.enforcer.settled();
    expect(host.prompts).toHaveLength(1);
    await advance(1000);
    b.enforcer.handleEvent(ev.idle(S)); // the turn ended: B sees the idle
    await advance(11_000);
    await a.enforcer.settled();
    await b.enforcer.settled();
    expect(host.prompts).toHaveLength(2);
    expect(a.rows.trail(S)).toEqual(["armed", "fired", "injected", "armed", "fired", "injected"]);
  });

  // The key pressed in a TUI whose clock is behind, while B's look at the same idle still reads OpenCode.
  it("the person's key pressed on a host whose clock is behind is honoured by the other replica", async () => {
    const folder = tempFolder();
    const hostA = newHost();
    const hostB = newHost();
    hostB.todoDelayMs = 3000;
    const a = await engine(folder, hostA);
    const b = await engine(folder, hostB, SKEW_MS);
    a.enforcer.handleEvent(ev.idle(S));
    b.enforcer.handleEvent(ev.idle(S));
    await advance(1000);
    expect(a.rows.countdowns(S)).toMatchObject([{ state: "armed" }]);
    const tui = await openTestDatabase(folder, undefined, "postgres");
    try {
      const at = Date.now() - SKEW_MS;
      expect(
        await tui.store.change(cancelByKey({ sessionId: S, directory: DIRECTORY }, at, { source: "tui" })),
      ).toBeTruthy();
    } finally {
      await tui.store.close();
    }
    await advance(3000); // B's read answers now
    await advance(20_000);
    await a.enforcer.settled();
    await b.enforcer.settled();
    expect(hostA.prompts.length + hostB.prompts.length).toBe(0);
    expect(a.rows.trail(S)).toEqual(["armed", "cancelled:user_key", "skipped:user_key"]);
  });
});
