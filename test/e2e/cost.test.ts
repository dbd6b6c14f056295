// What continuing costs, in a real OpenCode 1.18.33 whose scripted model reports its usage and has a price, so that
// OpenCode itself computes each step's cost: every continuation's bill equals OpenCode's own totals for the turn it
// caused, maxContinuationCost stops the loop where the numbers say, and the CLI reports the same.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, requireBuiltCli } from "../support/cli.js";
import { E2E } from "./support/harness.js";
import { HEADER } from "./support/world.js";
import type { ModelReply, ModelRequest, ScriptContext } from "./support/scripted-model.js";
import { todowrite } from "./support/scripted-model.js";

/** $ per million tokens: OpenCode's `cost` of a model in its configuration. */
const PRICE = { input: 3, output: 15, cache_read: 0.3 };
/** Each continuation's turn: a call that writes a file, then one that answers the tool's result. */
const TOOL_CALL = { prompt: 4000, completion: 600, cached: 1000 };
const ANSWER = { prompt: 4700, completion: 40 };
const perMillion = (tokens: number, price: number) => (tokens * price) / 1e6;
const TURN_COST =
  perMillion(TOOL_CALL.prompt - TOOL_CALL.cached, PRICE.input) +
  perMillion(TOOL_CALL.completion, PRICE.output) +
  perMillion(TOOL_CALL.cached, PRICE.cache_read) +
  perMillion(ANSWER.prompt, PRICE.input) +
  perMillion(ANSWER.completion, PRICE.output);
const TURN_TOKENS = TOOL_CALL.prompt + TOOL_CALL.completion + ANSWER.prompt + ANSWER.completion;
/** Two turns fit; the third would likely overrun (spent 2 turns + the median of 1 turn > the budget). */
const BUDGET = TURN_COST * 2.5;

function script(_request: ModelRequest, ctx: ScriptContext): ModelReply {
  if (ctx.afterTool) return { text: "I will stop here for now.", usage: ANSWER };
  const n = ctx.userTexts.filter((t) => t.includes(HEADER)).length;
  const todos = todowrite([
    ["import the data", "in_progress"],
    ["export the data", "pending"],
  ]);
  const write = { name: "write", args: { filePath: `cost/step-${n}.txt`, content: `step ${n}\n` } };
  return { toolCalls: [todos, write], usage: TOOL_CALL };
}

describe("what continuing costs, in a real OpenCode", () => {
  const world = new E2E(script, { countdownSeconds: 1, maxContinuationCost: BUDGET }, { modelCost: PRICE });

  beforeAll(async () => {
    requireBuiltCli();
    await world.start();
  }, 60_000);
  afterAll(async () => {
    await world.stop();
  });

  it("bills each continuation exactly as OpenCode totals its turn, and the cost budget stops it where the numbers say", async () => {
    const id = await world.session("cost");
    await world.prompt(id, "scenario: cost");
    const trail = await world.trailAtRest(id, "skipped:cost_budget", 60_000);
    expect(trail).toEqual([
      ...Array.from({ length: 2 }, () => ["armed", "fired", "injected"]).flat(),
      "skipped:cost_budget",
    ]);

    // OpenCode's own totals of each continuation's turn: its assistant messages whose parent is the continuation.
    const messages = await world.messages(id);
    const bills = world.bills(id);
    expect(bills).toHaveLength(2);
    for (const bill of bills) {
      const answers = messages.filter((m) => m.info.role === "assistant" && m.info.parentID === bill.message_id);
      const steps = answers.flatMap((m) => m.parts.filter((p) => p.type === "step-finish"));
      const cost = answers.reduce((sum, m) => sum + Number(m.info.cost), 0);
      const tokens = steps.reduce((sum, p) => {
        const t = p.tokens as {
          input: number;
          output: number;
          reasoning: number;
          cache: { read: number; write: number };
        };
        return sum + t.input + t.output + t.reasoning + t.cache.read + t.cache.write;
      }, 0);
      expect(answers).toHaveLength(2);
      expect({ messages: bill.messages, steps: bill.steps, tokens: bill.tokens, outcome: bill.outcome }).toEqual({
        messages: 2,
        steps: 2,
        tokens,
        outcome: "completed",
      });
      expect(bill.cost).toBe(cost);
      expect(bill.tokens).toBe(TURN_TOKENS);
      expect(bill.cost).toBeCloseTo(TURN_COST, 12);
    }
    // Each turn wrote one new file; the whole session's spend is OpenCode's own, as session.get reports it: by the
    // last bill nothing else had run, so it is the session's total now.
    expect(bills.map((b) => b.files_changed)).toEqual([1, 1]);
    // The v1 SDK's Session type leaves out what OpenCode 1.18.33 sends: `cost` and `tokens`.
    const session = (await world.server.client.session.get({ path: { id }, throwOnError: true })).data as unknown as {
      cost: number;
    };
    const spentByOpenCode = messages.reduce((sum, m) => sum + Number(m.info.cost ?? 0), 0);
    expect(bills.at(-1)!.session_cost).toBe(session.cost);
    expect(session.cost).toBeCloseTo(spentByOpenCode, 12);
    expect(Number(bills[0]!.session_cost)).toBeLessThan(session.cost);
    const stop = world.audit(id).at(-1)!;
    expect(stop.detail).toMatchObject({ budget: "session_cost", limit: BUDGET, window: "since_user_message" });
    expect(stop.detail.spent as number).toBeCloseTo(2 * TURN_COST, 12);
    expect(stop.detail.estimate as number).toBeCloseTo(TURN_COST, 12);

    const reported = JSON.parse((await cli(["--db", world.dbPath, "--json", "cost", "--session", id])).stdout);
    expect(reported).toEqual([
      {
        key: id,
        continuations: 2,
        tokens: 2 * TURN_TOKENS,
        cost: expect.closeTo(2 * TURN_COST, 12),
        todos_closed: 0,
        files_changed: 2,
        session_cost: session.cost,
        share: expect.closeTo((2 * TURN_COST) / session.cost, 12),
      },
    ]);
    console.log(
      `e2e cost: 2 continuations at $${TURN_COST.toFixed(6)} and ${TURN_TOKENS} tokens each (of $${session.cost.toFixed(6)} for the session), then cost_budget`,
    );
  }, 90_000);
});

describe("a continuation's turn cut short by a SIGKILL of OpenCode", () => {
  /** Resolved when the continuation's second model call (after its tool ran) has arrived and hangs. */
  let hanging: () => void = () => undefined;
  const hung = new Promise<void>((resolve) => (hanging = resolve));
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));

  async function crashScript(_request: ModelRequest, ctx: ScriptContext): Promise<ModelReply> {
    const lastUser = ctx.userTexts.at(-1) ?? "";
    if (lastUser.includes("finish it"))
      return ctx.afterTool ? { text: "Done." } : { toolCalls: [todowrite([["import the data", "completed"]])] };
    if (!lastUser.includes(HEADER))
      return ctx.afterTool
        ? { text: "I will stop here for now.", usage: ANSWER }
        : { toolCalls: [todowrite([["import the data", "in_progress"]])], usage: ANSWER };
    if (!ctx.afterTool) {
      const write = { name: "write", args: { filePath: "cost/crash.txt", content: "half done\n" } };
      return { toolCalls: [write], usage: TOOL_CALL };
    }
    hanging();
    await released;
    return { text: "never heard", usage: ANSWER };
  }

  const world = new E2E(crashScript, { countdownSeconds: 1 }, { modelCost: PRICE });

  beforeAll(async () => {
    requireBuiltCli();
    await world.start();
  }, 60_000);
  afterAll(async () => {
    release();
    await world.stop();
  });

  it("is billed once after the restart, as far as OpenCode got: the steps it finished, the turn interrupted", async () => {
    const id = await world.session("cost-crash");
    await world.prompt(id, "scenario: cost-crash");
    await world.waitForAudit(id, "injected", 30_000);
    await hung;
    await world.crashServer();
    expect(world.bills(id)).toEqual([]);
    await world.startServer();
    // The first request for the project loads the plugin again, which bills what ended while it was down.
    const messages = await world.messages(id);
    const bill = await waitForBill(id);
    const answers = messages.filter((m) => m.info.role === "assistant" && m.info.parentID === bill.message_id);
    expect(answers).toHaveLength(2);
    expect(answers[1]!.info.time).not.toHaveProperty("completed");
    expect(bill).toMatchObject({ outcome: "interrupted", messages: 2, steps: 1, tool_calls: 1, files_changed: 1 });
    expect(bill.cost).toBe(answers.reduce((sum, m) => sum + Number(m.info.cost), 0));
    expect(bill.tokens).toBe(TOOL_CALL.prompt + TOOL_CALL.completion);
    expect(bill.cost).toBeGreaterThan(0);

    // The person takes over and the work ends: the look after their turn reads the cut turn again, and bills nothing
    // more.
    await world.prompt(id, "finish it");
    await world.waitForAudit(id, "skipped:todos_complete", 30_000);
    expect(world.bills(id)).toHaveLength(1);
    const reported = JSON.parse((await cli(["--db", world.dbPath, "--json", "cost", "--session", id])).stdout);
    expect(reported).toMatchObject([{ key: id, continuations: 1, cost: bill.cost, tokens: bill.tokens }]);
    console.log(
      `e2e cost after a SIGKILL mid-turn: billed once at the restart, ${bill.tokens} tokens, $${bill.cost.toFixed(6)}`,
    );
  }, 120_000);

  /** The session's one bill, once the restarted plugin has written it. */
  function waitForBill(id: string) {
    return world.waitFor("the bill after the restart", () => world.bills(id)[0], 30_000);
  }
});
