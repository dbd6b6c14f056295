// The plugin inside a real OpenCode 1.18.33 (`opencode serve` from the opencode-ai devDependency), offline, with a
// scripted model. Each scenario asserts on what the model received, on the todos, and on the plugin's SQLite rows.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sleep } from "../support/wait-for.js";
import { E2E } from "./support/harness.js";
import { HEADER } from "./support/world.js";
import { textOf } from "./support/scripted-model.js";
import { script } from "./scenarios.js";

/** The default `gracePeriodMs`. */
const GRACE_MS = 500;

describe("the plugin in a real OpenCode server", () => {
  const world = new E2E(script, {});

  beforeAll(async () => {
    await world.start();
  }, 60_000);
  afterAll(async () => {
    await world.stop();
  });

  it("continues a session that stopped with open todos, once, with the right agent, model and status line", async () => {
    const id = await world.session("basic");
    await world.prompt(id, "scenario: basic");
    const armed = await world.waitForAudit(id, "armed");
    const injected = await world.waitForAudit(id, "injected", 15_000);
    const fired = world.audit(id).find((r) => r.event === "fired")!;
    // The default countdown of 2 s is respected.
    expect(fired.at - armed.at).toBeGreaterThanOrEqual(2000);
    await world.waitForAudit(id, "skipped:todos_complete", 15_000);
    // OpenCode accepted every call it was sent, the countdown's toasts among them (a fraction of a millisecond in the
    // last second's duration was refused with a 400 and a warning in its log).
    expect(world.server.output()).not.toMatch(/schema rejection/);

    const continuation = world.continuationRequests("basic");
    expect(continuation).toHaveLength(1);
    const text = textOf(continuation[0]!.messages.at(-1)!.content);
    expect(text.startsWith(HEADER)).toBe(true);
    expect(text).toContain("[Status: 1/3 completed, 2 remaining]");
    expect(text).toContain('Continue from: "add the tests"');
    expect(continuation[0]!.model).toBe("model-1");

    const messages = await world.messages(id);
    const injectedMessage = messages.find((m) =>
      m.parts.some((p) => typeof p.text === "string" && (p.text as string).startsWith(HEADER)),
    )!;
    expect(injectedMessage.info).toMatchObject({
      role: "user",
      agent: "build",
      model: { providerID: "scripted", modelID: "model-1" },
    });
    expect(world.injections(id)).toMatchObject([
      {
        status: "sent",
        agent: "build",
        model: "scripted/model-1",
        todos_total: 3,
        todos_open: 2,
        message_id: injectedMessage.info.id,
      },
    ]);
    expect(await world.todos(id)).toEqual([
      { content: "write the parser", status: "completed", priority: "medium" },
      { content: "add the tests", status: "completed", priority: "medium" },
      { content: "update the docs", status: "completed", priority: "medium" },
    ]);
    expect(world.trail(id)).toEqual(["armed", "fired", "injected", "skipped:todos_complete"]);
    console.log(`e2e: idle → continuation sent in ${injected.at - armed.at} ms (countdown 2 s)`);
  });

  it("does nothing when every todo is completed in the first turn", async () => {
    const id = await world.session("complete");
    await world.prompt(id, "scenario: complete");
    // At rest after the skip (nothing armed, pending or owed; OpenCode idle): nothing can follow without a new event.
    expect(await world.trailAtRest(id, "skipped:todos_complete")).toEqual(["skipped:todos_complete"]);
    expect(world.injections(id)).toEqual([]);
    expect(world.continuationRequests("complete")).toEqual([]);
    expect(world.trail(id)).toEqual(["skipped:todos_complete"]);
  });

  it("a user message during the countdown cancels it (user_message)", async () => {
    const id = await world.session("user-message");
    await world.prompt(id, "scenario: user-message");
    await world.waitForAudit(id, "armed");
    // A user message within the grace period (500 ms from the countdown's arming, by its row) is taken for the echo
    // of the turn that just ended: the user writes after it, as the situation under test has it.
    const armedAt = Number(world.countdowns(id)[0]!.armed_at);
    await sleep(Math.max(0, armedAt + GRACE_MS + 50 - Date.now()));
    await world.prompt(id, "drop the rest, I will finish myself");
    expect(await world.trailAtRest(id, "skipped:todos_complete", 15_000)).toEqual([
      "armed",
      "cancelled:user_message",
      "skipped:todos_complete",
    ]);
    expect(world.countdowns(id)).toMatchObject([{ state: "cancelled", end_reason: "user_message" }]);
    expect(world.injections(id)).toEqual([]);
    expect(world.continuationRequests("user-message")).toEqual([]);
  });

  it("an aborted session is not continued (aborted)", async () => {
    const id = await world.session("abort");
    await world.prompt(id, "scenario: abort");
    await world.waitFor("the slow model call", () => world.requestsFor("abort").length >= 2);
    await world.server.client.session.abort({ path: { id }, throwOnError: true });
    const skipped = await world.waitForAudit(id, "skipped:aborted");
    // OpenCode 1.18.33 publishes session.idle twice for an aborted turn: each idle is judged, and skipped.
    await world.waitForAudit(id, "skipped:aborted", 20_000, 1);
    expect(await world.trailAtRest(id, "skipped:aborted")).toEqual(["skipped:aborted", "skipped:aborted"]);
    expect(world.injections(id)).toEqual([]);
    expect(world.continuationRequests("abort")).toEqual([]);
    expect(world.audit(id).map((r) => r.event)).not.toContain("armed");
    expect(skipped.detail.stage).toBe("idle");
  });

  it("a model that never updates its todos is continued stagnationLimit times, then stopped (stagnation)", async () => {
    const id = await world.session("stagnation");
    await world.prompt(id, "scenario: stagnation");
    const continued = ["armed", "fired", "injected"];
    expect(await world.trailAtRest(id, "skipped:stagnation", 40_000)).toEqual([
      ...continued,
      ...continued,
      ...continued,
      "skipped:stagnation",
    ]);
    expect(world.continuationRequests("stagnation")).toHaveLength(3);
    expect(world.injections(id).map((i) => i.status)).toEqual(["sent", "sent", "sent"]);
    expect(world.audit(id).at(-1)).toMatchObject({
      event: "skipped",
      reason: "stagnation",
      detail: { unproductiveContinuations: 3, limit: 3 },
    });
  });

  it("nothing is injected while a question waits for the user; after the answer, continuation resumes", async () => {
    const id = await world.session("question");
    await world.prompt(id, "scenario: question");
    const asked = await world.waitFor("a pending question", async () => {
      const response = await fetch(
        `${world.server.url}/question?directory=${encodeURIComponent(world.server.project)}`,
      );
      const list = (await response.json()) as Array<{ id: string; sessionID: string }>;
      return list.find((q) => q.sessionID === id);
    });
    // OpenCode 1.18.33 keeps the session busy while the question tool waits: no idle, no countdown, no prompt. What
    // ends the wait is the answer: the whole trail after it (first row after the answer) shows that nothing came first.
    expect(await world.sessionIdle(id)).toBe(false);
    expect(world.audit(id)).toEqual([]);
    expect(world.injections(id)).toEqual([]);
    const answeredAt = Date.now();
    const reply = await fetch(
      `${world.server.url}/question/${asked.id}/reply?directory=${encodeURIComponent(world.server.project)}`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ answers: [["sqlite"]] }),
      },
    );
    expect(reply.ok).toBe(true);
    await world.waitForAudit(id, "injected", 20_000);
    expect(await world.trailAtRest(id, "skipped:todos_complete", 15_000)).toEqual([
      "armed",
      "fired",
      "injected",
      "skipped:todos_complete",
    ]);
    expect(world.audit(id)[0]!.at).toBeGreaterThanOrEqual(answeredAt);
    expect(world.continuationRequests("question")).toHaveLength(1);
  });

  it("a busy child session holds its parent back (children_running); the child itself is filtered", async () => {
    const parent = await world.session("parent");
    const child = await world.session("child", parent);
    await world.prompt(child, "scenario: child");
    await world.waitFor("the child to be busy", () => world.requestsFor("child").length >= 1);
    await world.prompt(parent, "scenario: parent");
    const skipped = await world.waitForAudit(parent, "skipped:children_running", 15_000);
    expect(skipped.detail).toMatchObject({ busyChildren: 1 });
    expect(world.injections(parent)).toEqual([]);
    await world.waitForAudit(child, "skipped:session_filtered", 20_000);
    expect(world.injections(child)).toEqual([]);
  });
});
