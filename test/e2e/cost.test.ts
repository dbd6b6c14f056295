// What continuing costs, in a real OpenCode 1.18.33 whose scripted model reports its usage and has a price, so that
// OpenCode itself computes each step's cost: every continuation's bill equals OpenCode's own totals for the turn it
// caused, maxContinuationCost stops the loop where the numbers say, and the CLI reports the same.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, requireBuiltCli } from "../support/cli.js";
import { E2E, HEADER } from "./support/harness.js";
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
    const trail = await world.waitForRest(id, "skipped:cost_budget", 60_000);
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
    const stop = world.audit(id).at(-1)!;
    expect(stop.detail).toMatchObject({ budget: "session_cost", limit: BUDGET, window: "since_user_message" });
    expect(stop.detail.spent as number).toBeCloseTo(2 * TURN_COST, 12);
    expect(stop.detail.estimate as number).toBeCloseTo(TURN_COST, 12);

    const reported = JSON.parse((await cli(["--db", world.dbPath, "--json", "cost", "--session", id])).stdout);
    expect(reported).toEqual([
      { key: id, continuations: 2, tokens: 2 * TURN_TOKENS, cost: expect.closeTo(2 * TURN_COST, 12), todos_closed: 0 },
    ]);
    console.log(
      `e2e cost: 2 continuations at $${TURN_COST.toFixed(6)} and ${TURN_TOKENS} tokens each, then cost_budget`,
    );
  }, 90_000);
});
