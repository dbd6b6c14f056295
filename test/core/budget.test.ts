import { describe, expect, it } from "vitest";
import { overBudget } from "../../src/core/budget.js";
import { explain } from "../../src/core/explain.js";

const NONE = { maxContinuationCost: 0, maxContinuationTokens: 0, dailyContinuationCost: 0 };
const bills = (...costs: number[]) => costs.map((cost) => ({ cost, tokens: Math.round(cost * 100_000) }));

describe("the spend budgets", () => {
  it("no budget set: nothing is ever over", () => {
    expect(overBudget({ spent: { cost: 1e6, tokens: 1e12 }, spentToday: 1e6, recentBills: bills(5) }, NONE)).toBe(
      undefined,
    );
  });

  it("a session's cost budget is spent once what its continuations cost reaches it", () => {
    const config = { ...NONE, maxContinuationCost: 1 };
    expect(overBudget({ spent: { cost: 0.99, tokens: 0 } }, config)).toBeUndefined();
    expect(overBudget({ spent: { cost: 1, tokens: 0 } }, config)).toEqual({
      budget: "session_cost",
      spent: 1,
      limit: 1,
      window: "since_user_message",
    });
  });

  it("stops before a continuation that would likely overrun: the median of the last five", () => {
    const config = { ...NONE, maxContinuationCost: 1 };
    // Five recent ones cost 0.1, 0.1, 0.2, 0.9 and 0.15: the median 0.15 would take 0.9 past 1.
    const recentBills = bills(5, 0.1, 0.1, 0.2, 0.9, 0.15);
    expect(overBudget({ spent: { cost: 0.84, tokens: 0 }, recentBills }, config)).toBeUndefined();
    expect(overBudget({ spent: { cost: 0.9, tokens: 0 }, recentBills }, config)).toEqual({
      budget: "session_cost",
      spent: 0.9,
      limit: 1,
      window: "since_user_message",
      estimate: 0.15,
    });
  });

  it("tokens count when the model has no price (cost 0): a token budget still stops it", () => {
    const config = { ...NONE, maxContinuationCost: 1, maxContinuationTokens: 50_000 };
    const free = [{ cost: 0, tokens: 20_000 }];
    expect(overBudget({ spent: { cost: 0, tokens: 40_000 }, recentBills: free }, config)).toMatchObject({
      budget: "session_tokens",
      estimate: 20_000,
    });
  });

  it("the daily cap counts every session of the database", () => {
    const config = { ...NONE, dailyContinuationCost: 5 };
    expect(overBudget({ spent: { cost: 0, tokens: 0 }, spentToday: 5.2 }, config)).toEqual({
      budget: "daily_cost",
      spent: 5.2,
      limit: 5,
      window: "today",
    });
  });

  it("a session's first continuation is estimated from today's latest of the database under a daily cap", () => {
    // As a user found it: a cap of 0.003, continuations of ~0.0012, the day at 0.0024 after another session stopped.
    const config = { ...NONE, dailyContinuationCost: 0.003 };
    const day = { spent: { cost: 0, tokens: 0 }, spentToday: 0.0024, recentBillsToday: bills(0.0012, 0.0012) };
    expect(overBudget({ ...day, recentBills: [] }, config)).toEqual({
      budget: "daily_cost",
      spent: 0.0024,
      limit: 0.003,
      window: "today",
      estimate: 0.0012,
    });
    // The session's own bills, once it has some, are its estimate.
    expect(overBudget({ ...day, recentBills: bills(0.0001) }, config)).toBeUndefined();
    // The day's bills estimate the daily cap only: a session's own budget waits for its own.
    const own = { ...NONE, maxContinuationCost: 0.0013 };
    expect(overBudget({ ...day, spent: { cost: 0.0002, tokens: 0 }, recentBills: [] }, own)).toBeUndefined();
  });
});

describe("what a person allowed beyond the caps", () => {
  const allowed = (cost: number, tokens = 0) => ({ continuations: 0, cost, tokens });

  it("is added to the session's caps, and the stop names the limit it used and the allowance", () => {
    const config = { ...NONE, maxContinuationCost: 1, maxContinuationTokens: 50_000 };
    expect(overBudget({ spent: { cost: 1.2, tokens: 0 }, allowed: allowed(0.5) }, config)).toBeUndefined();
    expect(overBudget({ spent: { cost: 1.5, tokens: 0 }, allowed: allowed(0.5) }, config)).toEqual({
      budget: "session_cost",
      spent: 1.5,
      limit: 1.5,
      allowed: 0.5,
      window: "since_user_message",
    });
    expect(overBudget({ spent: { cost: 0, tokens: 60_000 }, allowed: allowed(0, 20_000) }, config)).toBeUndefined();
    expect(overBudget({ spent: { cost: 0, tokens: 70_000 }, allowed: allowed(0, 20_000) }, config)).toMatchObject({
      budget: "session_tokens",
      limit: 70_000,
      allowed: 20_000,
    });
    // The estimate is measured against the raised limit too.
    const recentBills = bills(0.3);
    expect(overBudget({ spent: { cost: 1.3, tokens: 0 }, recentBills, allowed: allowed(0.5) }, config)).toEqual({
      budget: "session_cost",
      spent: 1.3,
      limit: 1.5,
      allowed: 0.5,
      window: "since_user_message",
      estimate: 0.3,
    });
  });

  it("lets this session spend that much beyond the day's cap", () => {
    const config = { ...NONE, dailyContinuationCost: 5 };
    const day = { spent: { cost: 0, tokens: 0 }, spentToday: 5.2 };
    expect(overBudget({ ...day, allowed: allowed(1) }, config)).toBeUndefined();
    expect(overBudget({ ...day, spentToday: 6, allowed: allowed(1) }, config)).toEqual({
      budget: "daily_cost",
      spent: 6,
      limit: 6,
      allowed: 1,
      window: "today",
    });
  });

  it("a cap that is not set stays none: an allowance makes no cap", () => {
    expect(
      overBudget({ spent: { cost: 1e6, tokens: 1e12 }, spentToday: 1e6, allowed: allowed(0.01, 1) }, NONE),
    ).toBeUndefined();
  });
});

describe("what the stop says", () => {
  it.each([
    [
      { budget: "session_cost", spent: 1.02, limit: 1 },
      "stopped: $1.02 of $1.00 spent",
      "palette: Allow more to go on",
    ],
    [
      { budget: "session_cost", spent: 0.045, limit: 0.05 },
      "stopped: $0.045 of $0.050 spent",
      "palette: Allow more to go on",
    ],
    [
      { budget: "session_tokens", spent: 412_345, limit: 400_000 },
      "stopped: 412k of 400k tokens",
      "palette: Allow more to go on",
    ],
    [{ budget: "daily_cost", spent: 5.2, limit: 5 }, "stopped: $5.20 of $5.00 today", "palette: Allow more to go on"],
  ])("%j", (detail, text, hint) => {
    expect(explain("skipped", "cost_budget", detail)).toEqual({ standing: "stopped", text, hint });
  });
});

describe("the continuation budget's stop says what it cost", () => {
  it("the amount beside the way on, once the continuations were billed; as before when nothing was", () => {
    expect(explain("skipped", "budget_exhausted", { continuations: 20, limit: 20, spent: 0.42, tokens: 9000 })).toEqual(
      {
        standing: "stopped",
        text: "stopped: the budget of 20 is spent",
        hint: "$0.42 spent; palette: Allow more",
      },
    );
    expect(explain("skipped", "budget_exhausted", { continuations: 20, limit: 20 })?.hint).toBe(
      "palette: Allow more to go on",
    );
  });
});
