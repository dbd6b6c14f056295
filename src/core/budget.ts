// The spend budgets: per session since the last real user message (cost and tokens, like `maxContinuations`), and per
// day across every session of the database (a fleet shares it). A budget is spent once what was spent reaches it, and
// a continuation is not started when what this session's recent ones cost says it would likely overrun — for the daily
// budget, what today's recent ones of the database cost when the session has none yet. What a person allowed the
// session since (`todo-continuation allow`) is added to each cap that is set; a cap that is not set stays none. Pure.
import type { DecisionConfig, DurableFacts } from "./decision.js";

/** What the continuations of one session cost lately: the estimate of the next one is their median. */
export const ESTIMATE_FROM = 5;

export type BudgetName = "session_cost" | "session_tokens" | "daily_cost";

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The detail of the `cost_budget` skip: which budget, spent, the limit it used and its window, what was allowed beyond
 * the cap (when anything), and the estimate if it decided. The session's allowance raises its own caps and, for this
 * session only, the day's: a session allowed 0.50 more may go on until the database's spend today reaches the daily
 * cap plus 0.50, while every other session still stops at the cap.
 */
export function overBudget(
  durable: Pick<DurableFacts, "spent" | "spentToday" | "recentBills" | "recentBillsToday" | "allowed">,
  config: Pick<DecisionConfig, "maxContinuationCost" | "maxContinuationTokens" | "dailyContinuationCost">,
): Record<string, unknown> | undefined {
  const recent = (durable.recentBills ?? []).slice(-ESTIMATE_FROM);
  const costEstimate = median(recent.map((b) => b.cost));
  // A session's first continuation costs what today's latest ones did: a day's cap holds for it too.
  const dayEstimate = costEstimate ?? median((durable.recentBillsToday ?? []).slice(-ESTIMATE_FROM).map((b) => b.cost));
  const allowed = { cost: durable.allowed?.cost ?? 0, tokens: durable.allowed?.tokens ?? 0 };
  const budgets: Array<{
    budget: BudgetName;
    cap: number;
    allowed: number;
    spent: number;
    estimate?: number;
    window: string;
  }> = [
    {
      budget: "session_cost",
      cap: config.maxContinuationCost,
      allowed: allowed.cost,
      spent: durable.spent?.cost ?? 0,
      estimate: costEstimate,
      window: "since_user_message",
    },
    {
      budget: "session_tokens",
      cap: config.maxContinuationTokens,
      allowed: allowed.tokens,
      spent: durable.spent?.tokens ?? 0,
      estimate: median(recent.map((b) => b.tokens)),
      window: "since_user_message",
    },
    {
      budget: "daily_cost",
      cap: config.dailyContinuationCost,
      allowed: allowed.cost,
      spent: durable.spentToday ?? 0,
      estimate: dayEstimate,
      window: "today",
    },
  ];
  for (const { budget, cap, allowed: beyond, spent, estimate, window } of budgets) {
    if (cap <= 0) continue;
    const limit = cap + beyond;
    const stop = { budget, spent, limit, ...(beyond > 0 ? { allowed: beyond } : {}), window };
    if (spent >= limit) return stop;
    if (estimate !== undefined && spent + estimate > limit) return { ...stop, estimate };
  }
  return undefined;
}
