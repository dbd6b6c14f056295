// The enforcer's judgement inside a real OpenCode 1.18.33 with a scripted model: the user stepping in, replies that
// do no work, status churn, a question asked in plain text, provider errors (transient, then permanent), a busy
// grandchild, and a finished compaction. Each asserts what the model received and the rows the plugin wrote.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sleep } from "../support/wait-for.js";
import { E2E } from "./support/harness.js";
import { cli } from "../support/cli.js";
import { fixProvider, limitRequestTimes, script } from "./scenarios.js";

/** The default `gracePeriodMs`. */
const GRACE_MS = 500;

describe("judgement in a real OpenCode server", () => {
  // No stagger: a limit's park wakes at the reset itself. Every tool allowed, but a push asked about first (a check
  // continue_later must refuse).
  const permission = { "*": "allow", bash: { "*": "allow", "git push *": "ask" } };
  const world = new E2E(script, { errorCooldownMs: 1000, wakeJitterSeconds: 0 }, { config: { permission } });

  beforeAll(async () => {
    await world.start();
  }, 60_000);
  afterAll(async () => {
    await world.stop();
  });

  const sent = (id: string) => world.injections(id).filter((i) => i.status === "sent").length;

  /** A session continued once, counting down again, past the grace period: the moment a user can step in. */
  async function countingDownAfterContinuation(name: string): Promise<string> {
    const id = await world.session(name);
    await world.prompt(id, "scenario: takeover");
    await world.waitForAudit(id, "injected", 20_000);
    // The continuation's turn ran a command and stopped: its idle armed the next countdown (the row after `injected`).
    await world.waitForAudit(id, "armed", 20_000, 3);
    // The user steps in during that countdown, past its grace period (measured from the countdown row's armed_at: a
    // user message within it is taken for the echo of the turn that just ended).
    const armedAt = Number(world.countdowns(id).at(-1)!.armed_at);
    await sleep(Math.max(0, armedAt + GRACE_MS + 50 - Date.now()));
    return id;
  }

  /** A park's trail: held at its idle, woken, continued once, done. */
  const parkedThenContinued = (parked: string, woke = "woke:time") => [
    parked,
    "skipped:parked",
    woke,
    ...["armed", "fired", "injected"],
    "skipped:todos_complete",
  ];
  /** OpenCode 1.18.33 may report a turn's end twice (two idles a millisecond apart): a park's skip for each. */
  const oneSkipPerIdle = (trail: string[]) => trail.filter((t, i) => t !== "skipped:parked" || trail[i - 1] !== t);

  /** A session whose `continue_later` was refused: not parked, continued once as usual, done. */
  async function continuedOnceUnparked(scenario: string): Promise<void> {
    const id = await world.session(scenario);
    await world.prompt(id, `scenario: ${scenario}`);
    expect(await world.trailAtRest(id, "skipped:todos_complete", 30_000)).toEqual([
      ...["armed", "fired", "injected"],
      "skipped:todos_complete",
    ]);
  }

  /** What the plugin's `continue_later` answered the model: the tool results of the request after its call. */
  const toolAnswers = (scenario: string) =>
    world
      .requestsFor(scenario)
      .flatMap((r) => r.messages.filter((m) => m.role === "tool").map((m) => JSON.stringify(m.content)));

  it("continue_later: the model parks its session for 15 s; no model request while parked, then one continuation", async () => {
    const id = await world.session("later");
    await world.prompt(id, "scenario: later");
    const parked = await world.waitForAudit(id, "parked:agent");
    const until = parked.detail.until as number;
    expect(until - parked.at).toBeGreaterThanOrEqual(14_000);
    expect(parked.detail).toMatchObject({ asked: "CI is running" });
    await world.waitForAudit(id, "skipped:parked", 20_000);
    expect(toolAnswers("later").some((a) => a.includes("Parked until"))).toBe(true);
    const requestsWhileParked = world.requestsFor("later").length;
    const woke = await world.waitForAudit(id, "woke:time", 40_000);
    expect(woke.at).toBeGreaterThanOrEqual(until);
    // Parked, the session cost nothing: no request from the idle that skipped to the wake.
    expect(world.requestsFor("later")).toHaveLength(requestsWhileParked);
    expect(world.continuationRequests("later")).toEqual([]);
    expect(await world.trailAtRest(id, "skipped:todos_complete", 30_000)).toEqual(parkedThenContinued("parked:agent"));
    expect(world.continuationRequests("later")).toHaveLength(1);
    expect(JSON.stringify(world.continuationRequests("later")[0])).toContain(
      "Woken: the time you asked to wait for has come",
    );
  }, 90_000);

  it("continue_later with a check: run at once and every 15 s, woken when it passes on its third run, its output in the prompt", async () => {
    // Passes on its third run, and says which run it is.
    writeFileSync(
      join(world.server.project, "check.sh"),
      'n=$(cat check-runs 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > check-runs; echo "run $n"; [ "$n" -ge 3 ]\n',
    );
    const id = await world.session("later-check");
    await world.prompt(id, "scenario: later-check");
    const parked = await world.waitForAudit(id, "parked:agent");
    expect(parked.detail).toMatchObject({ check: { command: "sh ./check.sh", everyMs: 15_000 } });
    await world.waitForAudit(id, "skipped:parked", 20_000);
    expect(toolAnswers("later-check").some((a) => a.includes("once the check passes"))).toBe(true);
    const requestsWhileParked = world.requestsFor("later-check").length;
    const woke = await world.waitForAudit(id, "woke:check", 60_000);
    expect(woke.detail).toMatchObject({ run: 3, output: "run 3\n" });
    expect(world.requestsFor("later-check")).toHaveLength(requestsWhileParked);
    const trail = await world.trailAtRest(id, "skipped:todos_complete", 30_000);
    expect(oneSkipPerIdle(trail)).toEqual(parkedThenContinued("parked:agent", "woke:check"));
    const prompt = JSON.stringify(world.continuationRequests("later-check")[0]);
    expect(prompt).toContain("Woken: your check passed");
    expect(prompt).toContain("| run 3");
  }, 120_000);

  it("continue_later with a check the agent would be asked about: refused with why, nothing run or parked", async () => {
    await continuedOnceUnparked("later-check-refused");
    expect(
      toolAnswers("later-check-refused").some((a) =>
        a.includes(
          'the check will not be run: the agent \\"build\\" would be asked before running \\"git push origin main\\"',
        ),
      ),
    ).toBe(true);
  });

  it("a park ends without a wake when the person writes (unparked: user_message) or stops it (/stop-continuation)", async () => {
    const person = await world.session("later-person");
    await world.prompt(person, "scenario: later-person");
    await world.waitForAudit(person, "skipped:parked", 20_000);
    await world.prompt(person, "I will roll out the deploy myself; close the list.");
    const personTrail = await world.trailAtRest(person, "skipped:todos_complete", 30_000);
    expect(oneSkipPerIdle(personTrail)).toEqual([
      "parked:agent",
      "skipped:parked",
      "unparked:user_message",
      "skipped:todos_complete",
    ]);
    const stopped = await world.session("later-stop");
    await world.prompt(stopped, "scenario: later-stop");
    await world.waitForAudit(stopped, "skipped:parked", 20_000);
    await world.server.client.session.command({
      path: { id: stopped },
      body: { command: "stop-continuation", arguments: "" },
    });
    await world.waitForAudit(stopped, "unparked:stop", 20_000);
    expect(world.rows("SELECT state, end_reason FROM parks WHERE session_id = ?", stopped)).toEqual([
      { state: "unparked", end_reason: "stop" },
    ]);
    expect(world.continuationRequests("later-person")).toEqual([]);
    expect(world.continuationRequests("later-stop")).toEqual([]);
  });

  it("a limit OpenCode does not retry, its reset said only in its words: parked until then, no request meanwhile, then continued", async () => {
    const id = await world.session("limit-text");
    await world.prompt(id, "scenario: limit-text");
    const parked = await world.waitForAudit(id, "parked:limit", 30_000);
    expect(parked.detail).toMatchObject({
      resetFrom: { text: expect.stringMatching(/resets in \d+ seconds/i) },
      statusCode: 400,
    });
    const until = parked.detail.until as number;
    expect(until - parked.at).toBeGreaterThan(15_000);
    const woke = await world.waitForAudit(id, "woke:time", 60_000);
    expect(woke.at).toBeGreaterThanOrEqual(until);
    const trail = await world.trailAtRest(id, "skipped:todos_complete", 30_000);
    expect(oneSkipPerIdle(trail)).toEqual(parkedThenContinued("parked:limit"));
    // The todos, the call the limit refused; none while parked; then the continuation and its tool's answer.
    const times = limitRequestTimes.get("limit-text")!;
    expect(times.filter((t) => t > parked.at && t < woke.at)).toEqual([]);
    expect(world.continuationRequests("limit-text")).toHaveLength(1);
    expect(JSON.stringify(world.continuationRequests("limit-text")[0])).toContain("the provider's limit has reset");
  }, 90_000);

  it("continue_later with a time in the past is refused with why, and parks nothing", async () => {
    await continuedOnceUnparked("later-refused");
    expect(toolAnswers("later-refused").some((a) => a.includes("continue_later refused: `at` is in the past"))).toBe(
      true,
    );
  });

  it("§2 a user message after a continuation pauses it until /resume-continuation", async () => {
    const id = await countingDownAfterContinuation("takeover");
    await world.prompt(id, "Stop. Let me look at the parser first.");
    const paused = await world.waitForAudit(id, "skipped:user_took_over", 20_000, 3);
    const userMessage = (await world.messages(id)).find((m) =>
      m.parts.some((p) => p.text === "Stop. Let me look at the parser first."),
    )!;
    expect(paused.detail).toMatchObject({ messageId: userMessage.info.id, pausedAt: expect.any(Number) });
    expect(await world.trailAtRest(id, "skipped:user_took_over")).toEqual([
      "armed",
      "fired",
      "injected",
      "armed",
      "cancelled:user_message",
      "skipped:user_took_over",
    ]);
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

  it("§2 a user message quoting our id line is a person's: it pauses like any other", async () => {
    const id = await countingDownAfterContinuation("quoting");
    const quote = `Why did you send this? [todo-continuation id=${String(world.injections(id)[0]!.id)}]`;
    await world.prompt(id, quote);
    const paused = await world.waitForAudit(id, "skipped:user_took_over", 20_000, 3);
    const userMessage = (await world.messages(id)).find((m) => m.parts.some((p) => p.text === quote))!;
    expect(paused.detail).toMatchObject({ messageId: userMessage.info.id });
    expect(world.trail(id)).toContain("cancelled:user_message");
    expect(sent(id)).toBe(1);
  });

  it('§3 a reply with text only ("All done!") while todos stay open: one continuation, then no_progress_reply', async () => {
    const id = await world.session("text-only");
    await world.prompt(id, "scenario: text-only");
    const skipped = await world.waitForAudit(id, "skipped:no_progress_reply", 30_000);
    expect(skipped.detail).toMatchObject({ textOnlyReplies: 1, limit: 1 });
    expect(await world.trailAtRest(id, "skipped:no_progress_reply")).toEqual([
      "armed",
      "fired",
      "injected",
      "skipped:no_progress_reply",
    ]);
    expect(world.continuationRequests("text-only")).toHaveLength(1);
    expect(sent(id)).toBe(1);
  });

  it("§3 statuses toggled back and forth are churn, not progress: stagnation after a few, never 20", async () => {
    const id = await world.session("churn");
    await world.prompt(id, "scenario: churn");
    const trail = await world.trailAtRest(id, "skipped:stagnation", 90_000);
    expect(trail).toEqual([
      ...Array.from({ length: 5 }, () => ["armed", "fired", "injected"]).flat(),
      "skipped:stagnation",
    ]);
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
    expect(await world.trailAtRest(id, "skipped:waiting_for_user")).toEqual(["skipped:waiting_for_user"]);
    expect(world.injections(id)).toEqual([]);
    expect(world.continuationRequests("text-question")).toEqual([]);
    await world.prompt(id, "SQLite please");
    expect(await world.trailAtRest(id, "skipped:todos_complete", 30_000)).toEqual([
      "skipped:waiting_for_user",
      "armed",
      "fired",
      "injected",
      "skipped:todos_complete",
    ]);
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
    // OpenCode 1.18.33 publishes session.idle twice after a session.error: each idle is judged, and skipped.
    await world.waitForAudit(id, "skipped:provider_error", 20_000, 4);
    expect(await world.trailAtRest(id, "skipped:provider_error")).toEqual([
      "armed",
      "fired",
      "injected",
      "skipped:provider_error",
      "skipped:provider_error",
    ]);
    expect(world.continuationRequests("permanent")).toHaveLength(1);
    expect(world.injections(id)).toHaveLength(1);
  });

  it("§5 a 401, fixed, then `todo-continuation resume`: it names the refusal it lifted and the next look continues", async () => {
    const id = await world.session("refused-then-fixed");
    await world.prompt(id, "scenario: refused-then-fixed");
    await world.waitForAudit(id, "skipped:provider_error", 20_000);
    fixProvider("refused-then-fixed");
    const resumed = await cli(["--db", world.dbPath, "resume", id]);
    expect(resumed.stdout).toContain(`resumed ${id}: lifted the provider's refusal`);
    // The plugin takes the look the resume owes within a lease tick: a continuation, and the work completes.
    await world.waitForAudit(id, "skipped:todos_complete", 30_000);
    expect(world.continuationRequests("refused-then-fixed")).toHaveLength(2);
    expect(world.audit(id).find((r) => r.event === "unstopped")).toMatchObject({
      reason: "cli",
      detail: { lifted: ["provider_error"] },
    });
  }, 90_000);

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
    // The compaction made the session busy (ending the countdown); its idle is held: at rest, nothing came after.
    expect(await world.trailAtRest(id, "skipped:compaction")).toEqual([
      "armed",
      "cancelled:busy",
      "skipped:compaction",
    ]);
    expect(world.injections(id)).toEqual([]);
    await world.prompt(id, "carry on (scenario: compaction)");
    await world.waitForAudit(id, "skipped:todos_complete", 30_000);
    expect(world.continuationRequests("compaction")).toHaveLength(1);
  }, 90_000);
});
