// An idle with open todos: continued once after the countdown, with the agent and model of the latest real
// message; skipped when the todos are done, missing or unreadable; a failed todo read tried again after a backoff;
// repeated idles giving one continuation; the todos read again at the countdown's end and right before the prompt.
// A real engine on a real database, OpenCode played by a scripted host (one-session.ts).
import { describe, expect, it } from "vitest";
import { ev } from "../../support/events.js";
import { advance } from "../../support/fake-time.js";
import { boot, f, idle, S, settle, useOneSession } from "./one-session.js";

useOneSession();

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
