// Never twice, never forever: every way a prompt call can fail, each attempt bounded and audited, and a continuation
// that arrived despite an error found before anything is sent again. A real engine on a real SQLite file.
import { describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/resolve.js";
import { ev } from "../../support/events.js";
import { FakeHost } from "../../support/fake-host.js";
import { startEngine, type EngineFixture } from "../../support/engine-fixture.js";
import { advance, settle as settleEngine, useFakeTime } from "../../support/fake-time.js";

const S = "ses_delivery";
let f: EngineFixture;

async function boot(config: Partial<Config> = {}, host = new FakeHost()) {
  f = await startEngine({ host, config: { retryBaseMs: 1000, retryMaxMs: 8000, ...config } });
  f.host.addUserMessage(S, "build the thing");
  f.host.setTodos(S, [
    ["a", "pending"],
    ["b", "pending"],
  ]);
}

const settle = () => settleEngine(f);

/** The prompts OpenCode took (a failed call may still have been taken). */
const accepted = () => f.host.prompts.length;
const failures = () =>
  f.rows
    .audit(S)
    .filter((r) => r.event === "injection_failed")
    .map((r) => r.reason);

/** OpenCode took the prompt, the connection dropped, and the session's messages cannot be read: `unknown`. */
async function unknownAfterReset() {
  await boot();
  f.host.promptScript = ["accept-then-fail"];
  f.host.messagesBehaviour = "fail";
  f.enforcer.handleEvent(ev.idle(S));
  await advance(2500);
  await settle();
  expect(f.rows.injections(S)).toMatchObject([{ status: "unknown" }]);
}

useFakeTime(() => f);

describe("a prompt call that fails after OpenCode took it", () => {
  it("(connection reset after delivery) is found by its message id: sent, never sent again", async () => {
    await boot();
    f.host.promptScript = ["accept-then-fail"];
    f.enforcer.handleEvent(ev.idle(S));
    await advance(2500);
    await settle();
    await advance(120_000);
    await settle();
    expect(f.host.calls.prompt).toBe(1);
    expect(accepted()).toBe(1);
    expect(f.rows.injections(S)).toMatchObject([{ status: "sent" }]);
    expect(f.rows.audit(S).find((r) => r.event === "injected")).toMatchObject({
      detail: { afterError: "fetch failed" },
    });
    expect(f.rows.session(S)).toMatchObject({ continuations: 1 });
  });

  it("whose messages cannot be read at once: `unknown`, and the retry finds it before sending (reconciled: found)", async () => {
    await unknownAfterReset();
    expect(f.rows.countdowns(S).filter((c) => c.state === "armed")).toMatchObject([{ attempt: 1 }]);
    f.host.messagesBehaviour = "ok";
    await advance(1500);
    await settle();
    expect(f.host.calls.prompt).toBe(1);
    expect(f.rows.injections(S)).toMatchObject([{ status: "sent" }]);
    expect(f.rows.trail(S)).toContain("reconciled:found");
    // The retry countdown closes without a prompt; the session is then looked at afresh (its turn ran: a new idle).
    expect(f.rows.countdowns(S).map((c) => `${c.state}:${c.end_reason}`)).toEqual([
      "fired:null",
      "cancelled:in_flight",
      "armed:null",
    ]);
    // Counted once: as a continuation when its outcome became unknown, not again when found.
    expect(f.rows.session(S)).toMatchObject({ continuations: 1, consecutive_failures: 0 });
  });

  it("whose messages stay unreadable: the retry waits with backoff until it can look, never sending a second copy", async () => {
    await unknownAfterReset();
    // OpenCode slow or its event stream down for a minute: every retry finds the messages unreadable.
    for (let t = 0; t < 60_000; t += 1000) {
      await advance(1000);
      if (t % 15_000 === 0) f.enforcer.handleEvent(ev.idle(S));
    }
    await settle();
    expect(f.host.calls.prompt).toBe(1);
    expect(accepted()).toBe(1);
    const waits = f.rows.audit(S).filter((r) => r.event === "skipped" && r.reason === "in_flight");
    expect(waits.length).toBeGreaterThan(0);
    expect(waits[0]).toMatchObject({ detail: { awaiting: f.rows.injections(S)[0]!.id, messages: "unreadable" } });
    // Waits grow: a minute of unreadable messages is a handful of looks, not one a second.
    expect(waits.length).toBeLessThanOrEqual(12);
    f.host.messagesBehaviour = "ok";
    await advance(10_000);
    await settle();
    expect(f.rows.injections(S)[0]).toMatchObject({ status: "sent" });
    // Found first; only its turn's idle may be continued after that.
    const trail = f.rows.trail(S);
    expect(trail.filter((e, i) => e === "fired" && i < trail.indexOf("reconciled:found"))).toHaveLength(1);
    expect(accepted()).toBe(f.rows.injections(S).length);
  });

  it("whose messages never become readable: the wait gives up without sending, and later idles do the same", async () => {
    await unknownAfterReset();
    for (let t = 0; t < 40 * 60_000; t += 5000) await advance(5000);
    await settle();
    expect(accepted()).toBe(1);
    expect(f.rows.countdowns(S).filter((c) => c.state === "armed")).toEqual([]);
    const gaveUp = f.rows.audit(S).at(-1);
    expect(gaveUp).toMatchObject({ event: "skipped", reason: "in_flight", detail: { gaveUp: true } });
    f.enforcer.handleEvent(ev.idle(S));
    for (let t = 0; t < 60_000; t += 5000) await advance(5000);
    await settle();
    expect(f.host.calls.prompt).toBe(1);
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "in_flight", detail: { gaveUp: true } });
  });

  it("a refusal (HTTP 4xx) is not looked up: nothing was delivered; it is retried with backoff", async () => {
    await boot();
    f.host.promptScript = ["reject"];
    f.enforcer.handleEvent(ev.idle(S));
    await advance(2100);
    await settle();
    const lookups = f.host.calls.messages;
    expect(f.rows.injections(S)).toMatchObject([{ status: "failed", error: "prompt: HTTP 400 invalid request" }]);
    await advance(1000);
    await settle();
    expect(accepted()).toBe(1);
    expect(f.host.calls.messages - lookups).toBeLessThanOrEqual(1); // the retry's own fact read, no look-up for the 400
  });

  it("a connection refused is not looked up either", async () => {
    await boot();
    f.host.promptScript = ["refused"];
    f.enforcer.handleEvent(ev.idle(S));
    await settle();
    const before = f.host.calls.messages;
    await advance(2100);
    await settle();
    expect(f.rows.injections(S)).toMatchObject([{ status: "failed" }]);
    expect(f.host.calls.messages - before).toBe(1); // only the fact read before the call
  });

  it("a prompt refused for a full context is never retried", async () => {
    await boot();
    f.host.prompt = async () => {
      f.host.calls.prompt++;
      throw new Error("prompt: HTTP 400 prompt is too long: 210000 tokens > 200000 maximum");
    };
    f.enforcer.handleEvent(ev.idle(S));
    await advance(2500);
    await settle();
    await advance(60_000);
    await settle();
    expect(f.host.calls.prompt).toBe(1);
    expect(f.rows.audit(S).find((r) => r.event === "injection_failed")).toMatchObject({
      reason: "gave_up",
      detail: { final: true, tokenLimit: true },
    });
    f.enforcer.handleEvent(ev.idle(S));
    await settle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "token_limit" });
  });
});

describe("every attempt counts", () => {
  it("timeouts that never show up: maxRetries=2, maxContinuations=3 → 3 calls in 2 minutes, not 30", async () => {
    await boot({ maxRetries: 2, maxContinuations: 3, promptTimeoutMs: 500 });
    f.host.promptDefault = "hang";
    f.enforcer.handleEvent(ev.idle(S));
    for (let t = 0; t < 120_000; t += 500) {
      await advance(500);
      // OpenCode says idle again now and then (each idle is a chance to start over that must not reset the count).
      if (t % 10_000 === 0) f.enforcer.handleEvent(ev.idle(S));
    }
    await settle();
    expect(f.host.calls.prompt).toBe(3);
    expect(f.rows.injections(S).map((i) => i.status)).toEqual(["unknown", "unknown", "unknown"]);
    expect(failures()).toEqual(["timeout", "timeout", "timeout"]);
    expect(
      f.rows
        .audit(S)
        .filter((r) => r.event === "injection_failed")
        .at(-1),
    ).toMatchObject({ detail: { final: true, attempt: 3 } });
    // Each unknown one counted as a continuation: the budget is spent.
    expect(f.rows.session(S)).toMatchObject({ continuations: 3, consecutive_failures: 3 });
    // The attempts are spent before the budget is: the idles after it are held by the first guard that says no.
    expect(f.rows.trail(S)).toContain("skipped:gave_up");
  });

  it("failures in a row end only when a continuation's turn is seen starting", async () => {
    await boot({ maxRetries: 1 });
    f.host.promptScript = ["fail"];
    f.enforcer.handleEvent(ev.idle(S));
    await advance(2500);
    await settle();
    await advance(1500);
    await settle();
    expect(accepted()).toBe(1);
    expect(f.rows.session(S)).toMatchObject({ consecutive_failures: 1 });
    f.enforcer.handleEvent(ev.status(S, "busy"));
    await settle();
    expect(f.rows.session(S)).toMatchObject({ consecutive_failures: 0 });
  });
});

describe("the backoff never stalls a session", () => {
  it("a retry countdown cancelled by activity: the next idle is continued (once the backoff is over)", async () => {
    await boot({ retryBaseMs: 5000 });
    f.host.promptScript = ["fail"];
    f.enforcer.handleEvent(ev.idle(S));
    await advance(2500);
    await settle();
    expect(f.rows.countdowns(S).filter((c) => c.state === "armed")).toHaveLength(1);
    f.enforcer.handleEvent(ev.status(S, "busy"));
    await settle();
    expect(f.rows.countdowns(S).at(-1)).toMatchObject({ state: "cancelled", end_reason: "busy" });
    await advance(1000);
    f.enforcer.handleEvent(ev.status(S, "idle"));
    f.enforcer.handleEvent(ev.idle(S));
    await advance(5);
    const armed = f.rows.audit(S).at(-1)!;
    expect(armed).toMatchObject({ event: "armed", detail: { waitingFor: "backoff" } });
    expect(f.rows.trail(S)).not.toContain("skipped:backoff");
    await advance(5000);
    await settle();
    expect(accepted()).toBe(1);
  });

  it("an idle after the backoff ended is continued as usual", async () => {
    await boot({ retryBaseMs: 2000 });
    f.host.promptScript = ["fail"];
    f.enforcer.handleEvent(ev.idle(S));
    await advance(2500);
    await settle();
    f.enforcer.handleEvent(ev.status(S, "busy"));
    await advance(10_000);
    f.enforcer.handleEvent(ev.idle(S));
    await advance(2100);
    await settle();
    expect(accepted()).toBe(1);
  });
});

describe("a continuation that is accepted but never starts a turn", () => {
  it("is counted as failed (not_started) after startTimeoutMs and retried, bounded by maxRetries", async () => {
    const host = new FakeHost();
    host.autoReply = false;
    host.promptDefault = "accept-idle";
    await boot({ startTimeoutMs: 10_000, maxRetries: 2, retryBaseMs: 1000 }, host);
    f.enforcer.handleEvent(ev.idle(S));
    await advance(2100);
    await settle();
    expect(f.rows.injections(S)).toMatchObject([{ status: "sent" }]);
    await advance(10_000);
    await settle();
    expect(failures()).toEqual(["not_started"]);
    expect(f.rows.audit(S).find((r) => r.event === "injection_failed")).toMatchObject({
      detail: { attempt: 1, retryInMs: 1000 },
    });
    for (let i = 0; i < 20; i++) {
      await advance(5000);
      await settle();
    }
    expect(f.host.calls.prompt).toBe(3);
    expect(failures()).toEqual(["not_started", "not_started", "not_started"]);
    expect(
      f.rows
        .audit(S)
        .filter((r) => r.event === "injection_failed")
        .at(-1),
    ).toMatchObject({ detail: { final: true } });
  });

  it("OpenCode refusing it after the 204 (an agent that no longer exists: two session.errors, never busy, never idle)", async () => {
    const host = new FakeHost();
    host.autoReply = false;
    await boot({ startTimeoutMs: 5000, maxRetries: 1, retryBaseMs: 1000 }, host);
    // The 204 came, but OpenCode never wrote the message: its agent is gone.
    f.host.prompt = async () => {
      f.host.calls.prompt++;
      queueMicrotask(() => {
        for (let i = 0; i < 2; i++)
          f.enforcer.handleEvent(
            ev.error(S, "UnknownError", 'Agent not found: "writer". Available agents: build, plan'),
          );
      });
    };
    f.enforcer.handleEvent(ev.idle(S));
    await advance(2100);
    await settle();
    await advance(5000);
    await settle();
    expect(failures()).toEqual(["not_started"]);
    expect(f.rows.session(S)).toMatchObject({ last_error_kind: "permanent" });
    for (let i = 0; i < 10; i++) {
      await advance(3000);
      await settle();
    }
    // Its retry is not sent: the error says retrying cannot help (provider_error).
    expect(f.host.calls.prompt).toBe(1);
    expect(f.rows.countdowns(S).at(-1)).toMatchObject({ state: "cancelled", end_reason: "provider_error" });
  });

  it("a turn that starts in time confirms it: no failure", async () => {
    await boot({ startTimeoutMs: 10_000 });
    f.host.autoReply = false;
    f.enforcer.handleEvent(ev.idle(S));
    await advance(2100);
    await settle();
    f.enforcer.handleEvent(ev.status(S, "busy"));
    await advance(20_000);
    await settle();
    expect(failures()).toEqual([]);
    expect(f.rows.session(S)).toMatchObject({ recheck_at: null });
  });

  it("a missed busy event is not a failure when OpenCode shows the turn ran", async () => {
    await boot({ startTimeoutMs: 10_000 });
    f.enforcer.handleEvent(ev.idle(S));
    await advance(2100);
    await settle();
    await advance(10_000); // no event at all; the fake host answered the continuation with a turn
    await settle();
    expect(failures()).toEqual([]);
    expect(f.host.calls.prompt).toBe(1);
  });

  it("after a restart, a continuation left unanswered is found from the messages and counted once", async () => {
    const host = new FakeHost();
    host.autoReply = false;
    host.promptDefault = "accept-idle";
    await boot({ startTimeoutMs: 10_000, maxRetries: 0 }, host);
    f.enforcer.handleEvent(ev.idle(S));
    await advance(2100);
    await settle();
    const { folder } = f;
    await f.close();
    await advance(30_000);
    f = await startEngine({ folder, host, config: { startTimeoutMs: 10_000, maxRetries: 0, resumeWindowSeconds: 60 } });
    await settle();
    expect(failures()).toEqual(["not_started"]);
    expect(f.rows.audit(S).find((r) => r.event === "injection_failed")).toMatchObject({ detail: { final: true } });
    expect(f.host.calls.prompt).toBe(1);
  });
});

describe("resume through the API", () => {
  it("looks at the session at once, like the CLI and the command", async () => {
    await boot();
    expect(await f.enforcer.stop(S, "api")).toBe(true);
    f.enforcer.handleEvent(ev.idle(S));
    await settle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "stopped" });
    expect(await f.enforcer.resume(S, "api")).toBe(true);
    await advance(5);
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "armed", detail: { trigger: "resume" } });
    await advance(2100);
    await settle();
    expect(accepted()).toBe(1);
    expect(await f.enforcer.resume(S, "api")).toBe(true); // the count of continuations starts over
    await settle();
    expect(f.rows.session(S)).toMatchObject({ continuations: 0 });
    expect(await f.enforcer.resume("ses_unknown", "api")).toBe(false);
  });

  it("a resume written by another process (the CLI) is picked up within a lease tick", async () => {
    await boot({ leaseMs: 3000 });
    await f.enforcer.stop(S, "api");
    const { openStore } = await import("../../../src/store/open/open.js");
    const { resume } = await import("../../../src/store/changes/resume.js");
    const other = await openStore(f.dbPath);
    await other.change(resume({ sessionId: S, directory: "/work/project" }, "cli", Date.now()));
    await other.close();
    await advance(1100);
    await settle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "armed", detail: { trigger: "recheck" } });
  });
});

describe("an idle that comes while our continuation is still being delivered", () => {
  it("is looked at again once the delivery settles (the turn ran while a lost answer was looked up)", async () => {
    await boot();
    f.host.promptScript = ["accept-then-fail"];
    f.enforcer.handleEvent(ev.idle(S));
    await advance(2050); // the call failed; its look-up waits 300 ms
    // Meanwhile the continuation's turn ran and finished every todo, and OpenCode said idle.
    f.host.setTodos(S, [
      ["a", "completed"],
      ["b", "completed"],
    ]);
    f.enforcer.handleEvent(ev.idle(S));
    await advance(5);
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "in_flight" });
    await advance(500);
    await settle();
    expect(f.rows.trail(S).slice(-2)).toEqual(["injected", "skipped:todos_complete"]);
    expect(f.host.calls.prompt).toBe(1);
  });
});

describe("a turn that starts before the prompt call returns", () => {
  it("confirms the start (OpenCode goes busy before answering prompt_async)", async () => {
    await boot({ startTimeoutMs: 5000 });
    f.host.autoReply = false;
    const accept = f.host.prompt.bind(f.host);
    f.host.prompt = async (request, signal) => {
      f.enforcer.handleEvent(ev.status(S, "busy"));
      await accept(request, signal);
    };
    f.enforcer.handleEvent(ev.idle(S));
    await advance(2100);
    await settle();
    expect(f.rows.session(S)).toMatchObject({ recheck_at: null, consecutive_failures: 0 });
    await advance(10_000);
    await settle();
    expect(failures()).toEqual([]);
  });
});
