// A parked session on a real engine and database: the park holds every idle without a model call, and its wake owes
// the session a look that goes through every guard into a normal countdown and continuation (issue 48). How a park is
// made and woken is the store's (test/store/changes/park.cases.ts); here, what the engine does with one, and how a
// provider's limit (a failed turn, or OpenCode's own wait to retry) becomes one.
import { describe, expect, it } from "vitest";
import { park } from "../../../src/store/changes/park.js";
import { wake } from "../../../src/store/changes/wake.js";
import { DIRECTORY } from "../../support/engine-fixture.js";
import { ev } from "../../support/events.js";
import { advance } from "../../support/fake-time.js";
import { boot, f, idle, restart, S, settle, useOneSession, userSays } from "./one-session.js";

useOneSession();

const scope = { sessionId: S, directory: DIRECTORY, server: null };
const HOUR = 3_600_000;

async function parkFor(ms: number): Promise<void> {
  const now = Date.now();
  const parked = await f.port.change(
    park(scope, { id: "park_test01", reason: "agent", wakeAt: now + ms, detail: { asked: "CI is running" } }, now),
  );
  expect(parked).toMatchObject({ parked: true });
}

describe("a parked session", () => {
  it("is held at every idle, with no countdown and no prompt, saying how long is left", async () => {
    await boot({ countdownSeconds: 2 });
    f.host.setTodos(S, [["a", "pending"]]);
    await parkFor(2 * HOUR);
    await idle();
    await idle();
    await advance(10_000);
    await settle();
    const skips = f.rows.audit(S).filter((r) => r.event === "skipped");
    expect(skips.map((r) => r.reason)).toEqual(["parked", "parked"]);
    expect(skips[0]!.detail).toMatchObject({ parkId: "park_test01", park: "agent" });
    expect(skips[0]!.detail.wakesInMs as number).toBeGreaterThan(2 * HOUR - 60_000);
    expect(f.rows.countdowns(S)).toEqual([]);
    expect(f.host.prompts).toEqual([]);
  });

  it("once woken, is owed a look that arms a normal countdown and continues it, through every guard", async () => {
    await boot({ countdownSeconds: 2 });
    f.host.setTodos(S, [["a", "pending"]]);
    await parkFor(2 * HOUR);
    await idle();
    expect(f.rows.trail(S)).toEqual(["parked:agent", "skipped:parked"]);
    const woke = await f.port.change(wake(scope, "command", Date.now()));
    expect(woke).toMatchObject({ woke: true });
    // No event from OpenCode: the owed look the wake left is what finds the session, at the engine's next tick.
    await advance(f.config.leaseMs);
    await settle();
    await advance(2100);
    await settle();
    expect(f.rows.trail(S)).toEqual(["parked:agent", "skipped:parked", "woke:command", "armed", "fired", "injected"]);
    expect(f.host.prompts).toHaveLength(1);
  });

  it("wakes by itself when its time comes, at the lease tick after it, and is continued", async () => {
    await boot({ countdownSeconds: 2 });
    f.host.setTodos(S, [["a", "pending"]]);
    await parkFor(5 * 60_000);
    await idle();
    await advance(5 * 60_000 - f.config.leaseMs);
    await settle();
    expect(f.rows.trail(S)).toEqual(["parked:agent", "skipped:parked"]);
    await advance(f.config.leaseMs);
    await settle();
    await advance(2100);
    await settle();
    expect(f.rows.trail(S)).toEqual(["parked:agent", "skipped:parked", "woke:time", "armed", "fired", "injected"]);
    expect(f.host.prompts).toHaveLength(1);
    // Its prompt says why it was woken; the next continuation has nothing to explain.
    expect(JSON.stringify(f.host.prompts[0])).toContain('you were waiting for: \\"CI is running\\"');
    await idle();
    await advance(2100);
    await settle();
    expect(f.host.prompts).toHaveLength(2);
    expect(JSON.stringify(f.host.prompts[1])).not.toContain("Woken");
  });

  it("ends without waking when the person writes: they took over from the wait", async () => {
    await boot({ countdownSeconds: 2 });
    f.host.setTodos(S, [["a", "pending"]]);
    await parkFor(HOUR);
    userSays();
    await settle();
    expect(f.rows.trail(S).filter((t) => /park/.test(t))).toEqual(["parked:agent", "unparked:user_message"]);
    expect(await f.port.change(wake(scope, "command", Date.now()))).toMatchObject({ woke: false });
  });

  it("woken while stopped by the person, stays stopped: a park is no way around a stop", async () => {
    await boot({ countdownSeconds: 2 });
    f.host.setTodos(S, [["a", "pending"]]);
    await parkFor(HOUR);
    expect(await f.enforcer.stop(S, "command")).toBe(true);
    // The stop ended the park; a wake finds nothing to wake, and an idle is the stop's.
    expect(await f.port.change(wake(scope, "command", Date.now()))).toMatchObject({ woke: false });
    await idle();
    expect(f.rows.trail(S)).toEqual(["parked:agent", "stopped:command", "unparked:stop", "skipped:stopped"]);
    expect(f.host.prompts).toEqual([]);
  });
});

describe("a provider's limit, waited out by a park", () => {
  const addFailedTurn = () =>
    f.host.addAssistantMessage(S, {
      error: { name: "APIError", statusCode: 429, isRetryable: true, message: "Too Many Requests" },
    });

  it("a turn failed on a rate limit parks the session until its retry-after, then it is continued", async () => {
    await boot({ countdownSeconds: 2, wakeJitterSeconds: 0 });
    f.host.setTodos(S, [["a", "pending"]]);
    f.enforcer.handleEvent(ev.providerError(S, 429, "Too Many Requests", { "retry-after": "40" }));
    addFailedTurn();
    await idle();
    expect(f.rows.trail(S)).toEqual(["parked:limit", "skipped:parked"]);
    expect(f.rows.parks(S)[0]).toMatchObject({ reason: "limit", detail: { resetFrom: { field: "retry-after" } } });
    expect(f.rows.session(S)).toMatchObject({ last_error_kind: "limit", error_streak: 0 });
    expect(f.host.toasts.map((t) => t.message)).toContainEqual(expect.stringMatching(/^Parked until .*limit lifts/));
    await advance(40_000 - f.config.leaseMs);
    await settle();
    expect(f.host.prompts).toEqual([]);
    await advance(f.config.leaseMs + 10);
    await settle();
    await advance(2100);
    await settle();
    // The failed turn is still the last one: as a limit, no guard holds it once its park is over.
    expect(f.rows.trail(S)).toEqual(["parked:limit", "skipped:parked", "woke:time", "armed", "fired", "injected"]);
    expect(f.host.prompts).toHaveLength(1);
  });

  it("a limit that needs paying stops at once as a provider error, parking nothing", async () => {
    await boot({ countdownSeconds: 2 });
    f.host.setTodos(S, [["a", "pending"]]);
    f.enforcer.handleEvent(ev.providerError(S, 429, "You exceeded your current quota: insufficient_quota"));
    f.host.addAssistantMessage(S, {
      error: { name: "APIError", statusCode: 429, message: "You exceeded your current quota: insufficient_quota" },
    });
    await idle();
    expect(f.rows.trail(S)).toEqual(["skipped:provider_error"]);
    expect(f.rows.parks(S)).toEqual([]);
  });

  it("OpenCode's own wait to retry is recorded as a park, which ends quietly when its retry starts", async () => {
    await boot({ countdownSeconds: 2, wakeJitterSeconds: 0 });
    f.host.setTodos(S, [["a", "pending"]]);
    f.enforcer.handleEvent(ev.status(S, "busy"));
    // A short wait (OpenCode's own backoff on a server error) is not worth a park.
    f.enforcer.handleEvent(ev.retrying(S, Date.now() + 4000));
    f.enforcer.handleEvent(ev.retrying(S, Date.now() + 40_000));
    await settle();
    expect(f.rows.trail(S)).toEqual(["parked:opencode_retry"]);
    expect(f.rows.parks(S)[0]!.detail).toMatchObject({ attempt: 1, message: "Too Many Requests" });
    f.enforcer.handleEvent(ev.status(S, "busy"));
    await settle();
    expect(f.rows.trail(S)).toEqual(["parked:opencode_retry", "unparked:expired"]);
  });

  it("OpenCode's wait to retry outlives OpenCode: the park wakes the session when the time comes", async () => {
    await boot({ countdownSeconds: 2, wakeJitterSeconds: 0 });
    f.host.setTodos(S, [["a", "pending"]]);
    f.enforcer.handleEvent(ev.status(S, "busy"));
    f.enforcer.handleEvent(ev.retrying(S, Date.now() + 40_000));
    await settle();
    // OpenCode killed during its wait: no status, no idle ever comes; a new enforcer finds the park.
    await restart({ countdownSeconds: 2, wakeJitterSeconds: 0 });
    await advance(40_000 + f.config.leaseMs);
    await settle();
    await advance(2100);
    await settle();
    expect(f.rows.trail(S)).toEqual(["parked:opencode_retry", "woke:time", "armed", "fired", "injected"]);
    expect(f.host.prompts).toHaveLength(1);
  });

  it("a limit whose event never came (before a restart, a takeover) is parked from the messages at the look, once", async () => {
    await boot({ countdownSeconds: 2, wakeJitterSeconds: 0 });
    f.host.setTodos(S, [["a", "pending"]]);
    // The turn failed on a 429 while no process listened: only its message keeps the error.
    const error = {
      name: "APIError",
      message: "Too Many Requests",
      statusCode: 429,
      responseHeaders: { "retry-after": "40" },
    };
    f.host.addAssistantMessage(S, { error, parts: [] });
    await idle();
    await settle();
    expect(f.rows.trail(S)).toEqual(["parked:limit", "skipped:parked"]);
    expect(f.rows.parks(S)[0]).toMatchObject({ reason: "limit", detail: { resetFrom: { field: "retry-after" } } });
    expect(f.host.prompts).toEqual([]);
    // Woken at its time; the same failure, still the last message, does not park it again.
    await advance(40_000 + f.config.leaseMs);
    await settle();
    await advance(2100);
    await settle();
    expect(f.rows.trail(S)).toEqual(["parked:limit", "skipped:parked", "woke:time", "armed", "fired", "injected"]);
    expect(f.host.prompts).toHaveLength(1);
  });

  it("parks found long overdue (nobody was there to wake them) wake spread over the jitter window, not at once", async () => {
    await boot({ countdownSeconds: 2, wakeJitterSeconds: 60 });
    const now = Date.now();
    // Due 10 minutes ago: OpenCode was down when their time came.
    const sessions = Array.from({ length: 20 }, (_, i) => `ses_late_${String(i).padStart(2, "0")}`);
    for (const [i, sessionId] of sessions.entries()) {
      const request = { id: `park_late_${i}`, reason: "agent" as const, wakeAt: now - 10 * 60_000, detail: {} };
      await f.port.change(park({ sessionId, directory: DIRECTORY, server: null }, request, now - 20 * 60_000));
    }
    const woke = () => f.rows.audit().filter((r) => r.event === "woke");
    await advance(f.config.leaseMs);
    await settle();
    const first = woke().length;
    expect(first).toBeLessThan(sessions.length / 2);
    await advance(60_000 + f.config.leaseMs);
    await settle();
    const rows = woke();
    expect(rows.map((r) => r.session_id).sort()).toEqual(sessions);
    // Woken at many points of the window, each saying how late its park was.
    expect(new Set(rows.map((r) => r.at)).size).toBeGreaterThanOrEqual(5);
    expect(Math.max(...rows.map((r) => r.at)) - Math.min(...rows.map((r) => r.at))).toBeGreaterThan(30_000);
    expect(rows.every((r) => (r.detail.lateMs as number) >= 10 * 60_000)).toBe(true);
  });
});
