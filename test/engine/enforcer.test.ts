// The engine on a real SQLite file with a scripted host and fake timers: every behaviour issue 2 lists, each
// asserted on what the host received and on the rows left in the database.
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { Config } from "../../src/config/resolve.js";
import { ev } from "../support/events.js";
import { startEngine, type EngineFixture } from "../support/engine-fixture.js";
import { advance, settle as settleEngine, useFakeTime } from "../support/fake-time.js";
import { gateChanges } from "../support/store-spies.js";

const S = "ses_main";
let f: EngineFixture;

async function boot(config: Partial<Config> = {}) {
  f = await startEngine({ config: { retryBaseMs: 1000, retryMaxMs: 4000, ...config } });
  f.host.addUserMessage(S, "build the thing", {
    agent: "build",
    providerId: "scripted",
    modelId: "model-1",
    variant: "high",
  });
}

async function idle(sessionId = S) {
  f.enforcer.handleEvent(ev.idle(sessionId));
  await advance(5);
}

/** A real user message as OpenCode publishes it: the message, then its text part. */
function userSays(sessionId = S, text = "please also do X") {
  const message = ev.userMessage(sessionId);
  f.enforcer.handleEvent(message);
  f.enforcer.handleEvent(ev.textPart(sessionId, message.properties.info.id, text));
  f.host.addUserMessage(sessionId, text);
}

const settle = () => settleEngine(f);

useFakeTime(() => f);

describe("idle with open todos", () => {
  it("injects once after the countdown, with the status line and the agent and model of the latest real message", async () => {
    await boot();
    f.host.setTodos(S, [
      ["parse", "completed"],
      ["test", "in_progress"],
      ["docs", "pending"],
    ]);
    await idle();
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "armed", todos_open: 2, todos_total: 3 }]);
    expect(f.host.toasts.map((t) => t.message)).toEqual(["Resuming in 2s… (2 todos open)"]);
    await advance(1000);
    expect(f.host.toasts.map((t) => t.message)).toEqual([
      "Resuming in 2s… (2 todos open)",
      "Resuming in 1s… (2 todos open)",
    ]);
    expect(f.host.prompts).toHaveLength(0);
    await advance(1000);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
    const prompt = f.host.prompts[0]!;
    expect(prompt.text).toContain("[Status: 1/3 completed, 2 remaining]");
    expect(prompt).toMatchObject({
      sessionId: S,
      agent: "build",
      model: { providerId: "scripted", modelId: "model-1" },
      variant: "high",
    });
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "fired", end_reason: null }]);
    expect(f.rows.injections(S)).toMatchObject([
      { status: "sent", agent: "build", model: "scripted/model-1", todos_total: 3, todos_open: 2 },
    ]);
    expect(f.rows.trail(S)).toEqual(["armed", "fired", "injected"]);
    expect(prompt.text).toContain(`[todo-continuation id=${f.rows.injections(S)[0]!.id}]`);
    // The transcript shows one line; the checklist above goes to the model as a synthetic part.
    expect(prompt.display).toBe('↻ todo-continuation: 1/3 done, continuing with "test"');
    expect(f.rows.session(S)).toMatchObject({ continuations: 1, directory: "/work/project" });
  });

  it.each([
    [
      "todos_complete",
      [
        ["a", "completed"],
        ["b", "cancelled"],
      ],
    ],
    [
      "todos_complete",
      [
        ["a", "blocked"],
        ["b", "deleted"],
      ],
    ],
    ["no_todos", []],
  ] as const)("skips with %s", async (reason, todos) => {
    await boot();
    f.host.setTodos(S, todos as unknown as Array<[string, string]>);
    await idle();
    await advance(3000);
    await settle();
    expect(f.host.prompts).toHaveLength(0);
    expect(f.rows.countdowns(S)).toHaveLength(0);
    expect(f.rows.audit(S)).toMatchObject([{ event: "skipped", reason, detail: { stage: "idle", trigger: "idle" } }]);
  });

  it("skips when the todos cannot be read, with the error in the audit detail", async () => {
    await boot();
    f.host.todoBehaviour = "fail";
    await idle();
    await settle();
    expect(f.rows.audit(S)).toMatchObject([
      { event: "skipped", reason: "todo_fetch_failed", detail: { error: "fetch failed" } },
    ]);
  });

  // No idle will come to look again: a slow or failing OpenCode at that moment must not leave the todos open for good.
  it("a todo read that fails is tried again after a backoff, and the session continues once OpenCode answers", async () => {
    await boot({ leaseMs: 3000 });
    f.host.setTodos(S, [["a", "pending"]]);
    f.host.todoBehaviour = "fail";
    await idle();
    await settle();
    expect(f.rows.audit(S)).toMatchObject([
      { event: "skipped", reason: "todo_fetch_failed", detail: { error: "fetch failed", attempt: 1, retryInMs: 1000 } },
    ]);
    expect(f.rows.session(S)?.recheck_at).toBeGreaterThan(Date.now());
    f.host.todoBehaviour = "ok";
    await advance(2100); // due in 1 s, picked up by the next lease tick (every second here)
    await settle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "armed", detail: { trigger: "recheck" } });
    await advance(2100);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
  });

  it("todo reads that keep failing are tried maxRetries times in a row, then not until the next idle", async () => {
    await boot({ leaseMs: 3000 });
    f.host.setTodos(S, [["a", "pending"]]);
    f.host.todoBehaviour = "fail";
    await idle();
    await settle();
    await advance(20_000);
    await settle();
    const reads = () => f.rows.audit(S).filter((r) => r.reason === "todo_fetch_failed");
    expect(reads().map((r) => r.detail.retryInMs ?? "gave up")).toEqual([1000, 2000, 4000, "gave up"]);
    expect(reads().at(-1)).toMatchObject({ detail: { attempt: 4, final: true } });
    expect(f.rows.session(S)).toMatchObject({ recheck_at: null });
    expect(f.host.prompts).toHaveLength(0);
    await idle(); // a new idle starts a new run
    await settle();
    expect(reads().at(-1)).toMatchObject({ detail: { attempt: 1, retryInMs: 1000 } });
  });

  it("a todo read that fails right before the prompt cancels the countdown and is tried again the same way", async () => {
    await boot({ leaseMs: 3000 });
    f.host.setTodos(S, [["a", "pending"]]);
    await idle();
    f.host.todoBehaviour = "hang";
    await advance(2000 + 10_000 + 100); // the countdown, then the read's timeout (hostTimeoutMs)
    await settle();
    expect(f.rows.audit(S).find((r) => r.reason === "todo_fetch_failed")).toMatchObject({
      event: "skipped",
      detail: { stage: "before_prompt", attempt: 1, retryInMs: 1000 },
    });
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "cancelled" }]);
    f.host.todoBehaviour = "ok";
    await advance(2100);
    await settle();
    await advance(2100);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
    expect(f.rows.countdowns(S).map((c) => c.state)).toEqual(["cancelled", "fired"]);
  });

  it("repeated idles give one injection (the newer countdown supersedes the older)", async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
    await idle();
    await advance(500);
    await idle();
    await idle();
    await advance(2500);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
    expect(f.rows.countdowns(S).map((c) => `${c.state}:${c.end_reason}`)).toEqual([
      "cancelled:superseded",
      "cancelled:superseded",
      "fired:null",
    ]);
    expect(f.rows.trail(S)).toEqual([
      "armed",
      "cancelled:superseded",
      "armed",
      "cancelled:superseded",
      "armed",
      "fired",
      "injected",
    ]);
  });

  it("the countdown's end re-checks the todos seen meanwhile", async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
    await idle();
    f.enforcer.handleEvent(ev.todos(S, [["a", "completed"]]));
    await advance(2100);
    await settle();
    expect(f.host.prompts).toHaveLength(0);
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "todos_complete" }]);
    expect(f.rows.trail(S)).toEqual(["armed", "skipped:todos_complete"]);
  });

  it("the todos are re-fetched right before the prompt call", async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
    await idle();
    f.host.setTodos(S, [["a", "completed"]]);
    await advance(2100);
    await settle();
    expect(f.host.prompts).toHaveLength(0);
    expect(f.rows.audit(S).at(-1)).toMatchObject({
      event: "skipped",
      reason: "todos_complete",
      detail: { stage: "before_prompt" },
    });
  });
});

describe("what cancels a countdown", () => {
  beforeEach(async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
  });

  it("a user message after the grace period cancels (user_message)", async () => {
    await idle();
    await advance(600);
    userSays();
    await advance(3000);
    await settle();
    expect(f.host.prompts).toHaveLength(0);
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "user_message" }]);
  });

  it("a user message within the grace period does not cancel", async () => {
    await idle();
    await advance(100);
    userSays();
    await advance(3000);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
    expect(f.rows.trail(S)).toEqual(["armed", "fired", "injected"]);
  });

  it("an echo of a known user message never cancels", async () => {
    const message = ev.userMessage(S);
    f.enforcer.handleEvent(message);
    f.enforcer.handleEvent(ev.textPart(S, message.properties.info.id, "hello"));
    await idle();
    await advance(1000);
    f.enforcer.handleEvent(message);
    await advance(2000);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
  });

  const activities: Array<[string, () => void, string]> = [
    ["assistant message.updated", () => f.enforcer.handleEvent(ev.assistantMessage(S)), "assistant_activity"],
    ["message.part.updated", () => f.enforcer.handleEvent(ev.partUpdated(S)), "assistant_activity"],
    ["message.part.delta", () => f.enforcer.handleEvent(ev.delta(S)), "assistant_activity"],
    ["tool.execute.before", () => f.enforcer.toolActivity(S, "before"), "tool_activity"],
    ["tool.execute.after", () => f.enforcer.toolActivity(S, "after"), "tool_activity"],
    ["session.status busy", () => f.enforcer.handleEvent(ev.status(S, "busy")), "busy"],
    ["session.status retry", () => f.enforcer.handleEvent(ev.status(S, "retry")), "recovering"],
    ["session.error", () => f.enforcer.handleEvent(ev.error(S, "APIError")), "session_error"],
  ];
  it.each(activities)("%s cancels (%s)", async (_name, act, reason) => {
    await idle();
    await advance(100);
    act();
    await advance(3000);
    await settle();
    expect(f.host.prompts).toHaveLength(0);
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: reason }]);
    expect(f.rows.audit(S)).toContainEqual(expect.objectContaining({ event: "cancelled", reason }));
  });

  it("a streamed chunk that arrives while the countdown's row is being written cancels it all the same", async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
    // Whichever backend the run uses: its store's arm waits for the test's say-so.
    const { open: release, restore } = gateChanges(f.port, "arm", "before");
    const arming = vi.spyOn(f.port, "change");
    f.enforcer.handleEvent(ev.idle(S));
    await vi.waitFor(() => expect(arming.mock.calls.some(([change]) => change.name === "arm")).toBe(true));
    f.enforcer.handleEvent(ev.delta(S));
    release();
    await advance(2100);
    await settle();
    expect(f.host.prompts).toHaveLength(0);
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "assistant_activity" }]);
    arming.mockRestore();
    restore();
  });

  it("activity in other sessions does not cancel", async () => {
    await idle();
    f.enforcer.handleEvent(ev.delta("ses_other"));
    f.enforcer.handleEvent(ev.partUpdated("ses_other"));
    f.enforcer.toolActivity("ses_other", "before");
    await advance(2100);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
  });

  it("deleting the session mid-countdown injects nothing and forgets it", async () => {
    await idle();
    f.enforcer.handleEvent(ev.deleted(S));
    await advance(3000);
    await settle();
    expect(f.host.prompts).toHaveLength(0);
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "session_deleted" }]);
    expect(f.rows.session(S)?.deleted_at).toEqual(expect.any(Number));
    expect(f.enforcer.stats()).toMatchObject({ armed: 0, timers: 0 });
  });
});

describe("errors, aborts and recovery", () => {
  beforeEach(async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
  });

  it("a transient error: the next idle arms a countdown that ends with the cooldown; a user message clears the cooldown", async () => {
    f.enforcer.handleEvent(ev.error(S, "APIError", "Internal server error"));
    const erroredAt = Date.now();
    await idle();
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "armed", deadline_at: erroredAt + 3000 }]);
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "armed", detail: { waitingFor: "error_cooldown" } });
    await advance(2900);
    await settle();
    expect(f.host.prompts).toHaveLength(0);
    await advance(200);
    await settle();
    expect(f.host.prompts).toHaveLength(1);

    f.enforcer.handleEvent(ev.error(S, "APIError", "Internal server error"));
    await settle();
    expect(f.rows.session(S)).toMatchObject({ error_streak: 1, last_error_kind: "transient" });
    userSays();
    await settle();
    expect(f.rows.session(S)).toMatchObject({ error_streak: 0, last_error_at: null, last_error_kind: null });
  });

  it("an abort blocks continuation until the next real activity, and resets failure counters", async () => {
    f.enforcer.handleEvent(ev.error(S, "MessageAbortedError", "The operation was aborted."));
    await idle();
    await advance(10_000);
    await idle();
    expect(
      f.rows
        .audit(S)
        .filter((r) => r.event === "skipped")
        .map((r) => r.reason),
    ).toEqual(["aborted", "aborted"]);
    expect(f.rows.session(S)).toMatchObject({ last_error_kind: "abort", consecutive_failures: 0 });
    userSays();
    await idle();
    await advance(2100);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
  });

  it("an abort seen only in the last assistant message blocks too", async () => {
    f.host.addAssistantMessage(S, { error: { name: "MessageAbortedError" } });
    await idle();
    expect(f.rows.audit(S)).toMatchObject([
      { event: "skipped", reason: "aborted", detail: { source: "last_assistant_message" } },
    ]);
  });

  it("new assistant output after an abort lifts it", async () => {
    f.enforcer.handleEvent(ev.error(S, "MessageAbortedError"));
    await advance(10);
    f.enforcer.handleEvent(ev.assistantMessage(S));
    await idle();
    expect(f.rows.countdowns(S)).toHaveLength(1);
  });

  it("a token-limit error stops continuation until a real user message", async () => {
    f.enforcer.handleEvent(ev.error(S, "APIError", "prompt is too long: 250000 tokens > 200000 maximum"));
    await advance(60_000);
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "token_limit" });
    userSays();
    await idle();
    expect(f.rows.countdowns(S)).toHaveLength(1);
  });

  it("recovering skips; recovery complete allows", async () => {
    f.enforcer.markRecovering(S);
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "recovering" });
    f.enforcer.markRecoveryComplete(S);
    await idle();
    await advance(2100);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
  });

  it("markRecovering cancels an armed countdown", async () => {
    await idle();
    f.enforcer.markRecovering(S);
    await advance(3000);
    await settle();
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "recovering" }]);
  });
});

describe("failing prompts", () => {
  it("back off exponentially and stop after the bound, each attempt audited", async () => {
    await boot({ maxRetries: 2, retryBaseMs: 1000 });
    f.host.setTodos(S, [["a", "pending"]]);
    f.host.promptDefault = "fail";
    await idle();
    await advance(2500); // countdown 2 s, then the failed call is looked up in the session (300 ms)
    await settle();
    expect(f.host.calls.prompt).toBe(1);
    expect(f.rows.session(S)).toMatchObject({ consecutive_failures: 1 });
    await advance(1500);
    await settle();
    expect(f.host.calls.prompt).toBe(2);
    await advance(2500);
    await settle();
    expect(f.host.calls.prompt).toBe(3);
    await advance(60_000);
    await settle();
    expect(f.host.calls.prompt).toBe(3);
    expect(f.rows.injections(S).map((i) => i.status)).toEqual(["failed", "failed", "failed"]);
    const failures = f.rows.audit(S).filter((r) => r.event === "injection_failed");
    expect(failures.map((r) => [r.reason, r.detail.retryInMs ?? "final"])).toEqual([
      ["retrying", 1000],
      ["retrying", 2000],
      ["gave_up", "final"],
    ]);
    expect(f.rows.countdowns(S).map((c) => c.attempt)).toEqual([0, 1, 2]);
  });

  it("a retry succeeds and clears the failure count", async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
    f.host.promptScript = ["fail"];
    await idle();
    await advance(2500);
    await settle();
    await advance(1000);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
    // Sent is not yet started: the failures in a row end when the turn is seen running.
    expect(f.rows.session(S)).toMatchObject({ consecutive_failures: 1, backoff_until: null, continuations: 1 });
    f.enforcer.handleEvent(ev.status(S, "busy"));
    await settle();
    expect(f.rows.session(S)).toMatchObject({ consecutive_failures: 0, recheck_at: null });
  });

  it("a prompt that times out but was accepted is recorded as sent, never resent", async () => {
    await boot({ promptTimeoutMs: 500 });
    f.host.setTodos(S, [["a", "pending"]]);
    f.host.promptScript = ["hang"];
    f.host.hangAccepts = true;
    await idle();
    await advance(2100);
    await advance(900);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
    expect(f.rows.injections(S)).toMatchObject([{ status: "sent" }]);
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "injected", detail: { afterTimeout: true } });
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

describe("loop protection", () => {
  async function cycle(todos: Array<[string, string]>) {
    f.host.setTodos(S, todos);
    await idle();
    await advance(2100);
    await settle();
  }

  it("consecutive continuations with progress are not throttled", async () => {
    await boot();
    const states: Array<Array<[string, string]>> = [
      [
        ["a", "in_progress"],
        ["b", "pending"],
        ["c", "pending"],
        ["d", "pending"],
        ["e", "pending"],
      ],
      [
        ["a", "completed"],
        ["b", "in_progress"],
        ["c", "pending"],
        ["d", "pending"],
        ["e", "pending"],
      ],
      [
        ["a", "completed"],
        ["b", "completed"],
        ["c", "in_progress"],
        ["d", "pending"],
        ["e", "pending"],
      ],
      [
        ["a", "completed"],
        ["b", "completed"],
        ["c", "completed"],
        ["d", "in_progress"],
        ["e", "pending"],
      ],
      [
        ["a", "completed"],
        ["b", "completed"],
        ["c", "completed"],
        ["d", "completed"],
        ["e", "in_progress"],
      ],
    ];
    for (const todos of states) await cycle(todos);
    expect(f.host.prompts).toHaveLength(5);
    expect(f.rows.session(S)).toMatchObject({ continuations: 5, stagnant_continuations: 0 });
  });

  it("stagnation stops after stagnationLimit continuations without status progress; progress resets it", async () => {
    await boot({ stagnationLimit: 3 });
    const stuck: Array<[string, string]> = [
      ["a", "pending"],
      ["b", "pending"],
    ];
    for (let i = 0; i < 5; i++) await cycle(stuck);
    expect(f.host.prompts).toHaveLength(3);
    expect(f.rows.audit(S).at(-1)).toMatchObject({
      event: "skipped",
      reason: "stagnation",
      detail: { unproductiveContinuations: 3, limit: 3 },
    });
    await cycle([
      ["a", "completed"],
      ["b", "pending"],
    ]);
    expect(f.host.prompts).toHaveLength(4);
  });

  it("the budget stops at maxContinuations; a real user message resets it", async () => {
    await boot({ maxContinuations: 2, stagnationLimit: 100 });
    await cycle([
      ["a", "pending"],
      ["b", "pending"],
      ["c", "pending"],
    ]);
    await cycle([
      ["a", "completed"],
      ["b", "pending"],
      ["c", "pending"],
    ]);
    await cycle([
      ["a", "completed"],
      ["b", "completed"],
      ["c", "pending"],
    ]);
    expect(f.host.prompts).toHaveLength(2);
    expect(f.rows.audit(S).at(-1)).toMatchObject({
      event: "skipped",
      reason: "budget_exhausted",
      detail: { continuations: 2, limit: 2 },
    });
    userSays();
    await cycle([
      ["a", "completed"],
      ["b", "completed"],
      ["c", "pending"],
    ]);
    expect(f.host.prompts).toHaveLength(3);
  });

  it("its own injected messages are not user activity", async () => {
    await boot({ maxContinuations: 2, stagnationLimit: 100 });
    await cycle([
      ["a", "pending"],
      ["b", "pending"],
      ["c", "pending"],
    ]);
    const { text: injected, messageId } = f.host.prompts[0]!;
    const own = ev.userMessage(S, messageId);
    f.enforcer.handleEvent(own);
    f.enforcer.handleEvent(ev.textPart(S, own.properties.info.id, injected));
    f.enforcer.handleEvent(ev.status(S, "busy"));
    await cycle([
      ["a", "completed"],
      ["b", "pending"],
      ["c", "pending"],
    ]);
    // Had the injection counted as a user message, the budget would have been reset to 0 before this cycle.
    expect(f.rows.session(S)).toMatchObject({ continuations: 2 });
    await cycle([
      ["a", "completed"],
      ["b", "completed"],
      ["c", "pending"],
    ]);
    expect(f.host.prompts).toHaveLength(2);
    expect(f.rows.audit(S).at(-1)).toMatchObject({ reason: "budget_exhausted" });
  });

  it("an own injection arriving during a countdown does not cancel it like a user would", async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
    await idle();
    await advance(700);
    // Another process's continuation: recorded with the message id it chose before its prompt call.
    f.db.run(
      `INSERT INTO injections (id, session_id, countdown_id, message_id, directory, created_at, status, todos_total, todos_open, owner, lease_until, updated_at)
       VALUES ('inj_fromotherproc', ?, 'cd_other', 'msg_fromotherproc', '/work/project', ?, 'pending', 1, 1, 'otherhost/1/live', ?, ?)`,
      S,
      Date.now(),
      Date.now() + 60_000,
      Date.now(),
    );
    const own = ev.userMessage(S, "msg_fromotherproc");
    f.enforcer.handleEvent(own);
    f.enforcer.handleEvent(ev.textPart(S, own.properties.info.id, "x\n[todo-continuation id=inj_fromotherproc]"));
    await advance(1500);
    await settle();
    expect(f.rows.audit(S).map((r) => r.reason)).not.toContain("user_message");
  });
});

describe("guards fed by events and by the host", () => {
  beforeEach(async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
  });

  it("a child session is filtered unless configured", async () => {
    f.enforcer.handleEvent(ev.created("ses_child", S));
    f.host.setTodos("ses_child", [["a", "pending"]]);
    await idle("ses_child");
    expect(f.rows.audit("ses_child")).toMatchObject([
      { event: "skipped", reason: "session_filtered", detail: { parentId: S } },
    ]);
  });

  it("a busy child session holds the parent back (children_running)", async () => {
    f.host.children.set(S, ["ses_child"]);
    f.host.statuses = { ses_child: "busy" };
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({
      event: "skipped",
      reason: "children_running",
      detail: { busyChildren: 1 },
    });
  });

  it("a pending question holds it back until it is answered", async () => {
    f.enforcer.handleEvent(ev.question(S, "q1", true));
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ reason: "waiting_for_user" });
    f.enforcer.handleEvent(ev.question(S, "q1", false));
    await idle();
    expect(f.rows.countdowns(S)).toHaveLength(1);
  });

  it("skipAgents and agents without write permission", async () => {
    f.host.addUserMessage(S, "plan it", { agent: "plan" });
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ reason: "agent_skipped", detail: { agent: "plan" } });
    f.host.addUserMessage(S, "read it", { agent: "reader" });
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ reason: "no_write_permission", detail: { agent: "reader" } });
  });

  it("disabled still audits each decision", async () => {
    await f.destroy();
    await boot({ enabled: false });
    f.host.setTodos(S, [["a", "pending"]]);
    await idle();
    expect(f.rows.audit(S)).toMatchObject([{ event: "skipped", reason: "disabled" }]);
    expect(f.host.calls.todos).toBe(0);
  });
});

describe("the durable stop", () => {
  it("holds across restarts and user messages until resumed", async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
    await idle();
    expect(await f.enforcer.stop(S, "command")).toBe(true);
    expect(await f.enforcer.stop(S, "command")).toBe(false);
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "stopped" }]);
    userSays();
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "stopped" });

    const { folder, host } = f;
    await f.close();
    f = await startEngine({ folder, host, config: { retryBaseMs: 1000 } });
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "stopped" });
    expect(await f.enforcer.resume(S, "command")).toBe(true);
    await idle();
    await advance(2100);
    await settle();
    expect(host.prompts).toHaveLength(1);
    expect(f.rows.trail(S).filter((t) => t.startsWith("stopped") || t.startsWith("unstopped"))).toEqual([
      "stopped:command",
      "unstopped:command",
    ]);
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
