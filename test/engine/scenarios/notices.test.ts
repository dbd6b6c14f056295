// What the person at the terminal is told and can do from outside the engine: one toast when continuation ends (not
// one per idle), and a countdown cancelled by another process (the TUI's key) that holds whatever the timing.
import { describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/resolve.js";
import type { NoticeChannels } from "../../../src/engine/notice-sender.js";
import { cancelByKey } from "../../../src/store/changes/cancel-by-key.js";
import { openStore } from "../../../src/store/open/open.js";
import { ev } from "../../support/events.js";
import { FakeHost } from "../../support/fake-host.js";
import { DIRECTORY, startEngine, type EngineFixture } from "../../support/engine-fixture.js";
import { advance, settle as settleEngine, useFakeTime } from "../../support/fake-time.js";

const S = "ses_notices";
let f: EngineFixture;

async function boot(config: Partial<Config> = {}, host = new FakeHost()) {
  f = await startEngine({ host, config: { stagnationLimit: 2, ...config } });
  f.host.addUserMessage(S, "build the thing");
  f.host.setTodos(S, [
    ["a", "pending"],
    ["b", "pending"],
  ]);
}

const settle = () => settleEngine(f);
const stopToasts = () => f.host.toasts.filter((t) => !t.message.startsWith("Resuming in"));

async function idleAndWait() {
  f.enforcer.handleEvent(ev.idle(S));
  await advance(2100);
  await settle();
}

useFakeTime(() => f);

describe("the toast that says why continuation stopped", () => {
  it("comes once per stop with the reason and what to do, not at every idle", async () => {
    await boot();
    for (let i = 0; i < 5; i++) await idleAndWait();
    expect(f.host.prompts).toHaveLength(2);
    expect(stopToasts()).toEqual([
      {
        title: "Todo continuation",
        message: "Stopped: 2 times without progress.\n/resume-continuation to go on.",
        variant: "warning",
        durationMs: 8000,
      },
    ]);
    expect(f.rows.session(S)).toMatchObject({ notified_stop: "stagnation" });
  });

  it("is not repeated after a restart, and comes again for the next stop once the session moved", async () => {
    const host = new FakeHost();
    await boot({}, host);
    for (let i = 0; i < 3; i++) await idleAndWait();
    expect(stopToasts()).toHaveLength(1);
    const { folder } = f;
    await f.close();
    f = await startEngine({ folder, host, config: { stagnationLimit: 2 } });
    await idleAndWait();
    expect(stopToasts()).toHaveLength(1);
    // The user resumes; the session moves; it stops again: that is news.
    await f.enforcer.resume(S, "api");
    for (let i = 0; i < 4; i++) await idleAndWait();
    expect(stopToasts().map((t) => t.message)).toEqual([
      "Stopped: 2 times without progress.\n/resume-continuation to go on.",
      "Stopped: 2 times without progress.\n/resume-continuation to go on.",
    ]);
  });

  it("says so when the user stepped in, and when every retry failed", async () => {
    await boot({ maxRetries: 0 });
    f.host.promptScript = ["reject"];
    await idleAndWait();
    expect(stopToasts().at(-1)?.message).toBe("Stopped: sending failed 1 time.\n/resume-continuation to go on.");
  });

  it("waiting states are not announced (a question, sub-sessions, a finished todo list)", async () => {
    await boot();
    f.host.addAssistantMessage(S, { parts: [{ type: "text", text: "Which one do you prefer?" }] });
    await idleAndWait();
    f.host.setTodos(S, [
      ["a", "completed"],
      ["b", "completed"],
    ]);
    await idleAndWait();
    expect(stopToasts()).toEqual([]);
  });

  it("respects toast: false (the log line stays)", async () => {
    await boot({ toast: false });
    for (let i = 0; i < 4; i++) await idleAndWait();
    expect(f.host.toasts).toEqual([]);
    expect(f.host.logs.some((l) => l.message === "continuation ended: stopped: 2 times without progress")).toBe(true);
  });
});

describe("a stop's notice", () => {
  /** A channel that takes budget notices and accepts each. */
  const budgetHook: NoticeChannels = {
    channels: [{ name: "hook", type: "webhook", kinds: ["budget"], timeoutMs: 1000 }],
    deliver: async () => ({ ok: true }),
  };

  it("carries what the continuations cost as `cost` shows it: the last one's turn is billed before the stop is told", async () => {
    const host = new FakeHost();
    // The continuation's turn, as a model bills it: 2,020 tokens, $0.0063.
    host.autoReply = false;
    host.onAccepted = (request) => {
      const usage = { cost: 0.0063, tokens: { input: 2000, output: 20, reasoning: 0, cacheRead: 0, cacheWrite: 0 } };
      host.addAssistantMessage(S, {
        parentId: request.messageId,
        providerId: "scripted",
        modelId: "model-1",
        usage,
        parts: [
          { type: "tool", tool: "bash", toolStatus: "completed" },
          { type: "step-finish", usage },
        ],
      });
    };
    f = await startEngine({ host, config: { maxContinuations: 1 }, noticeChannels: budgetHook });
    host.addUserMessage(S, "build the thing");
    host.setTodos(S, [
      ["a", "pending"],
      ["b", "pending"],
    ]);
    await idleAndWait();
    expect(host.prompts).toHaveLength(1);
    // The turn ended: its idle finds the budget spent before reading OpenCode.
    await idleAndWait();
    const bill = f.db.all<{ cost: number; tokens: number }>("SELECT cost, tokens FROM continuation_costs")[0];
    expect(bill).toMatchObject({ cost: 0.0063, tokens: 2020 });
    const [notice] = f.db.all<{ body: string }>("SELECT body FROM notices");
    expect(JSON.parse(notice!.body)).toMatchObject({
      reason: "budget_exhausted",
      continuations: { count: 1, cost: 0.0063, tokens: 2020 },
    });
  });
});

describe("a countdown cancelled from another process (the TUI's key)", () => {
  /** The TUI's own connection to the same database cancels. */
  const cancelFromOutside = async () => {
    const tui = await openStore(f.dbPath);
    try {
      return await tui.change(cancelByKey({ sessionId: S, directory: DIRECTORY }, Date.now(), { source: "tui" }));
    } finally {
      await tui.close();
    }
  };

  it("ends it at once in the database; the owner lets it go at its next tick; nothing is sent", async () => {
    await boot({ countdownSeconds: 5 });
    f.enforcer.handleEvent(ev.idle(S));
    await advance(5);
    const toastsBefore = f.host.toasts.length;
    expect(await cancelFromOutside()).toBeDefined();
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "user_key" }]);
    await advance(1000);
    expect(f.host.toasts.length).toBe(toastsBefore);
    expect(f.enforcer.stats()).toMatchObject({ armed: 0 });
    await advance(10_000);
    await settle();
    expect(f.host.prompts).toHaveLength(0);
    expect(f.rows.trail(S)).toEqual(["armed", "cancelled:user_key"]);
  });

  it("holds when it lands a millisecond before the deadline", async () => {
    await boot({ countdownSeconds: 2 });
    f.enforcer.handleEvent(ev.idle(S));
    await advance(1999);
    await cancelFromOutside();
    await advance(50);
    await settle();
    expect(f.host.prompts).toHaveLength(0);
    expect(f.rows.injections(S)).toEqual([]);
  });

  it("holds across a restart of the owner", async () => {
    const host = new FakeHost();
    await boot({ countdownSeconds: 5 }, host);
    f.enforcer.handleEvent(ev.idle(S));
    await advance(5);
    const { folder, dbPath } = f;
    await f.close();
    // While no enforcer runs, the TUI (its own connection to the file) cancels.
    const tui = await openStore(dbPath);
    expect(await tui.change(cancelByKey({ sessionId: S, directory: DIRECTORY }, Date.now(), {}))).toBeDefined();
    await tui.close();
    f = await startEngine({ folder, host, config: { countdownSeconds: 5 } });
    await advance(10_000);
    await settle();
    expect(host.prompts).toHaveLength(0);
  });

  it("too late once the continuation was claimed: nothing to cancel, the caller is told", async () => {
    await boot({ countdownSeconds: 1 });
    f.enforcer.handleEvent(ev.idle(S));
    await advance(1100);
    await settle();
    expect(await cancelFromOutside()).toBeUndefined();
    expect(f.host.prompts).toHaveLength(1);
  });
});

describe("a park's notice (kind waiting)", () => {
  const channels = (kinds: NoticeChannels["channels"][number]["kinds"]): NoticeChannels => ({
    channels: [{ name: "phone", type: "ntfy", kinds, timeoutMs: 1000 }],
    deliver: async () => ({ ok: true }),
  });

  async function parkedAndIdle(noticeChannels: NoticeChannels) {
    f = await startEngine({ noticeChannels });
    f.host.addUserMessage(S, "build the thing");
    f.host.setTodos(S, [["a", "pending"]]);
    expect(await f.enforcer.continueLater(S, { reason: "CI is running", minutes: 30 }, "build")).toMatchObject({
      parked: true,
    });
    await idleAndWait();
    await idleAndWait();
  }

  it("goes, once per park, to a channel that lists it, with the way on (wake it now)", async () => {
    await parkedAndIdle(channels(["waiting"]));
    expect(f.rows.trail(S)).toEqual(["parked:agent", "skipped:parked", "notified:waiting", "skipped:parked"]);
    const notices = f.db.all<{ kind: string; body: string }>("SELECT kind, body FROM notices");
    expect(notices.map((n) => n.kind)).toEqual(["waiting"]);
    expect(JSON.parse(notices[0]!.body)).toMatchObject({
      kind: "waiting",
      reason: "parked",
      goOn: { palette: "Wake parked todo continuation", command: `todo-continuation wake ${S}` },
    });
  });

  it("is not sent to a channel that takes the default kinds", async () => {
    await parkedAndIdle(channels(["question", "budget", "stuck", "done", "error"]));
    expect(f.rows.trail(S)).toContain("skipped:parked");
    expect(f.db.all("SELECT kind FROM notices")).toEqual([]);
  });
});
