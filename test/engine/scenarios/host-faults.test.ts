// OpenCode's API failing, hanging or answering garbage: bounded, audited, no duplicate continuation, no unhandled
// rejection, and no timer left behind once the engine is disposed.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ev } from "../../support/events.js";
import { startEngine, type EngineFixture } from "../../support/engine-fixture.js";
import { turn } from "../../support/wait-for.js";

const S = "ses_faults";
let f: EngineFixture;
const rejections: unknown[] = [];
const onRejection = (reason: unknown) => rejections.push(reason);

const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
let timersBefore = 0;

beforeEach(() => {
  rejections.length = 0;
  process.on("unhandledRejection", onRejection);
  timersBefore = timers();
});

/** A few turns of the event loop: a rejection nobody handled is reported by then. */
const turns = async (n = 3) => {
  for (let i = 0; i < n; i++) await turn();
};

afterEach(async () => {
  await f.destroy();
  await turns();
  process.off("unhandledRejection", onRejection);
  expect(rejections).toEqual([]);
  // Everything the engine scheduled is gone with it (host-call timeouts included).
  expect(timers()).toBeLessThanOrEqual(timersBefore);
});

async function boot(overrides = {}) {
  f = await startEngine({
    config: {
      countdownSeconds: 0.1,
      hostTimeoutMs: 150,
      promptTimeoutMs: 150,
      retryBaseMs: 100,
      retryMaxMs: 400,
      maxRetries: 2,
      toast: true,
      ...overrides,
    },
  });
  f.host.addUserMessage(S, "go");
  f.host.setTodos(S, [["a", "pending"]]);
}

/**
 * An idle, and the engine's work until the audit row that closes it (`event:reason`) is written. The bound is generous:
 * with both cores busy a 100 ms countdown has been seen to fire 2.7 s late, and a cycle holds several of them.
 */
async function cycle(closedBy: string) {
  f.enforcer.handleEvent(ev.idle(S));
  await vi.waitFor(() => expect(f.rows.trail(S)).toContain(closedBy), { timeout: 40_000, interval: 20 });
  await f.enforcer.settled();
}

describe("a failing OpenCode API", { timeout: 120_000 }, () => {
  it.each(["fail", "hang", "garbage"] as const)(
    "todo reads that %s: skipped with todo_fetch_failed, nothing sent",
    async (behaviour) => {
      await boot();
      f.host.todoBehaviour = behaviour;
      await cycle("skipped:todo_fetch_failed");
      expect(f.host.prompts).toEqual([]);
      expect(f.rows.audit(S)).toMatchObject([{ event: "skipped", reason: "todo_fetch_failed" }]);
      const expected = {
        fail: /fetch failed/,
        hang: /todo read did not answer within 150 ms/,
        garbage: /not a todo list/,
      }[behaviour];
      expect(String(f.rows.audit(S)[0]!.detail.error)).toMatch(expected);
    },
  );

  it.each(["fail", "hang", "garbage"] as const)(
    "message reads that %s: the facts they hold stay unknown; the continuation goes out once",
    async (behaviour) => {
      await boot();
      f.host.messagesBehaviour = behaviour;
      await cycle("injected");
      expect(f.host.prompts).toHaveLength(1);
      expect(f.rows.injections(S)).toMatchObject([{ status: "sent" }]);
    },
  );

  it("a prompt that keeps failing is retried with backoff, bounded, each failure audited", async () => {
    await boot();
    f.host.promptDefault = "fail";
    await cycle("injection_failed:gave_up");
    expect(f.host.calls.prompt).toBe(3);
    expect(
      f.rows
        .audit(S)
        .filter((r) => r.event === "injection_failed")
        .map((r) => r.reason),
    ).toEqual(["retrying", "retrying", "gave_up"]);
    expect(f.rows.injections(S).map((i) => i.status)).toEqual(["failed", "failed", "failed"]);
    const delays = f.rows
      .audit(S)
      .filter((r) => r.event === "injection_failed")
      .map((r) => r.detail.retryInMs ?? "gave up");
    console.log(
      `failing prompt: ${f.host.calls.prompt} attempts, backoff ${delays.join(" → ")} ms, 0 unhandled rejections, no timer left`,
    );
  });

  it("a prompt that times out without arriving is `unknown`, looked at again later, and never sent twice", async () => {
    await boot({ retryBaseMs: 300 });
    f.host.promptScript = ["hang"];
    await cycle("injected");
    expect(f.rows.injections(S).map((i) => i.status)).toEqual(["unknown", "sent"]);
    expect(f.host.prompts).toHaveLength(1);
  });

  it("a prompt that times out after being accepted is found and recorded as sent, never resent", async () => {
    await boot();
    f.host.promptScript = ["hang"];
    f.host.hangAccepts = true;
    await cycle("injected");
    expect(f.host.prompts).toHaveLength(1);
    expect(f.rows.injections(S)).toMatchObject([{ status: "sent" }]);
    expect(f.host.calls.prompt).toBe(1);
  });

  it("a toast that fails or hangs never disturbs the countdown", async () => {
    await boot({ countdownSeconds: 0.3 });
    f.host.toast = async () => {
      throw new Error("no TUI");
    };
    await cycle("injected");
    expect(f.host.prompts).toHaveLength(1);
  });
});
