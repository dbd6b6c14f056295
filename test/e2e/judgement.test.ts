// The enforcer's judgement inside a real OpenCode 1.18.33 with a scripted model: the user stepping in, replies that
// do no work, status churn, a question asked in plain text, provider errors (transient, then permanent), a busy
// grandchild, and a finished compaction. Each asserts what the model received and the rows the plugin wrote.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E, sleep } from "./support/harness.js";
import { script } from "./scenarios.js";

describe("judgement in a real OpenCode server", () => {
  const world = new E2E(script, { errorCooldownMs: 1000 });

  beforeAll(async () => {
    await world.start();
  }, 60_000);
  afterAll(async () => {
    await world.stop();
  });

  const sent = (id: string) => world.injections(id).filter((i) => i.status === "sent").length;

  it("§2 a user message after a continuation pauses it until /resume-continuation", async () => {
    const id = await world.session("takeover");
    await world.prompt(id, "scenario: takeover");
    const injected = await world.waitForAudit(id, "injected", 20_000);
    // The continuation's turn ran a command and stopped; the user steps in.
    await world.waitFor("the continuation's turn to end", () => world.requestsFor("takeover").length >= 4);
    await world.prompt(id, "Stop. Let me look at the parser first.");
    const from = world.audit(id).indexOf(world.audit(id).find((r) => r.at === injected.at && r.event === "injected")!);
    const paused = await world.waitForAudit(id, "skipped:user_took_over", 20_000, from);
    const userMessage = (await world.messages(id)).find((m) =>
      m.parts.some((p) => p.text === "Stop. Let me look at the parser first."),
    )!;
    expect(paused.detail).toMatchObject({ messageId: userMessage.info.id, pausedAt: expect.any(Number) });
    await sleep(3000);
    expect(sent(id)).toBe(1);
    expect(world.continuationRequests("takeover")).toHaveLength(1);

    world.server.client.session
      .command({ path: { id }, body: { command: "resume-continuation", arguments: "" } })
      .catch(() => undefined);
    await world.waitForAudit(id, "unstopped:command");
    await world.waitForAudit(id, "skipped:todos_complete", 30_000);
    expect(sent(id)).toBe(2);
    expect(world.continuationRequests("takeover")).toHaveLength(2);
  });

  it('§3 a reply with text only ("All done!") while todos stay open: one continuation, then no_progress_reply', async () => {
    const id = await world.session("text-only");
    await world.prompt(id, "scenario: text-only");
    const skipped = await world.waitForAudit(id, "skipped:no_progress_reply", 30_000);
    expect(skipped.detail).toMatchObject({ textOnlyReplies: 1, limit: 1 });
    await sleep(2500);
    expect(world.continuationRequests("text-only")).toHaveLength(1);
    expect(sent(id)).toBe(1);
  });

  it("§3 statuses toggled back and forth are churn, not progress: stagnation after a few, never 20", async () => {
    const id = await world.session("churn");
    await world.prompt(id, "scenario: churn");
    await world.waitForAudit(id, "skipped:stagnation", 90_000);
    await sleep(2500);
    const continued = world.continuationRequests("churn").length;
    console.log(`e2e churn: ${continued} continuations, then stagnation (the budget is 20)`);
    expect(continued).toBe(5);
    expect(world.trail(id)).not.toContain("skipped:budget_exhausted");
  }, 120_000);

  it("§4 a question asked in plain text is not answered by a continuation; after the user answers, it continues", async () => {
    const id = await world.session("text-question");
    await world.prompt(id, "scenario: text-question");
    const waiting = await world.waitForAudit(id, "skipped:waiting_for_user", 20_000);
    expect(waiting.detail).toMatchObject({ source: "text_question", question: "Which do you prefer?" });
    await sleep(3000);
    expect(world.injections(id)).toEqual([]);
    expect(world.continuationRequests("text-question")).toEqual([]);
    await world.prompt(id, "SQLite please");
    await world.waitForAudit(id, "skipped:todos_complete", 30_000);
    expect(world.continuationRequests("text-question")).toHaveLength(1);
    expect(sent(id)).toBe(1);
  });

  it("§5 a transient provider error (503, overloaded): looked at again after the cooldown, the work completes with no user action", async () => {
    const id = await world.session("transient");
    await world.prompt(id, "scenario: transient");
    await world.waitForAudit(id, "skipped:todos_complete", 60_000);
    const trail = world.trail(id);
    console.log(`e2e transient error: ${trail.join(", ")}`);
    expect(world.injections(id).map((i) => i.status)).toEqual(["sent", "sent"]);
    const recheck = world.audit(id).filter((r) => r.event === "armed")[1]!;
    expect(recheck.detail).toMatchObject({ waitingFor: "error_cooldown" });
    expect(await world.todos(id)).toEqual(
      expect.arrayContaining([expect.objectContaining({ content: "update the docs", status: "completed" })]),
    );
  }, 90_000);

  it("§5 a permanent provider error (401): at most one try, then provider_error", async () => {
    const id = await world.session("permanent");
    await world.prompt(id, "scenario: permanent");
    const skipped = await world.waitForAudit(id, "skipped:provider_error", 20_000);
    expect(skipped.detail).toMatchObject({ statusCode: 401 });
    await sleep(4000);
    expect(world.continuationRequests("permanent")).toHaveLength(1);
    expect(world.injections(id)).toHaveLength(1);
  });

  it("§6 a busy grandchild holds the parent; when it finishes, the parent is continued", async () => {
    const parent = await world.session("gp-parent");
    const child = await world.session("gp-child", parent);
    const grandchild = await world.session("gp-grandchild", child);
    await world.prompt(grandchild, "scenario: gp-grandchild");
    await world.waitFor("the grandchild to be busy", () => world.requestsFor("gp-grandchild").length >= 1);
    await world.prompt(parent, "scenario: gp-parent");
    const held = await world.waitForAudit(parent, "skipped:children_running", 20_000);
    expect(held.detail).toMatchObject({ busyChildren: 1, sessions: [grandchild] });
    expect(world.injections(parent)).toEqual([]);
    const armed = await world.waitForAudit(parent, "armed", 30_000);
    expect(armed.detail).toMatchObject({ trigger: "children_done" });
    await world.waitForAudit(parent, "skipped:todos_complete", 20_000);
    expect(world.continuationRequests("gp-parent")).toHaveLength(1);
    await world.waitForAudit(grandchild, "skipped:session_filtered", 20_000);
  });

  it("§6 after a compaction finished, nothing until the next real activity", async () => {
    const id = await world.session("compaction");
    await world.prompt(id, "scenario: compaction");
    await world.waitForAudit(id, "armed", 20_000);
    // The user compacts the session during the countdown.
    await world.server.client.session.summarize({
      path: { id },
      body: { providerID: "scripted", modelID: "model-1" },
      throwOnError: true,
      signal: AbortSignal.timeout(30_000),
    });
    const held = await world.waitForAudit(id, "skipped:compaction", 20_000);
    expect(held.detail).toMatchObject({ state: "finished" });
    await sleep(3000);
    expect(world.injections(id)).toEqual([]);
    await world.prompt(id, "carry on (scenario: compaction)");
    await world.waitForAudit(id, "skipped:todos_complete", 30_000);
    expect(world.continuationRequests("compaction")).toHaveLength(1);
  }, 90_000);
});
