// A continuation's bill: written once (two processes that look at the same turn bill it once, the first writer's
// stands), and its spend added to the session's totals since the last real user message or resume, which the
// budgets count.
import { change, q, type Change } from "../script.js";
import type { NewBill } from "../schema.js";
import type { SessionScope } from "../types.js";

/** The counts a bill that leaves them out has: the statements bind every column, so no default applies. */
const NOTHING_COUNTED = {
  messages: 0,
  steps: 0,
  toolCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  tokens: 0,
  cost: 0,
} satisfies Partial<NewBill>;

const COUNTS = Object.keys(NOTHING_COUNTED) as Array<keyof typeof NOTHING_COUNTED>;

/**
 * The bill with every count it leaves out as 0; the bill itself when it has them all, as a looked-at turn's bill does.
 * Copying a bill of 29 fields into a new object measured a third of the change's own cost (bench/bills.ts).
 */
function withCounts(bill: NewBill): NewBill {
  for (const key of COUNTS) if (bill[key] === undefined) return { ...NOTHING_COUNTED, ...bill };
  return bill;
}

/** True when this bill was written now; false when the continuation had one already. */
export function recordBill(scope: SessionScope, bill: NewBill, now: number): Change<boolean> {
  return change("record-bill", scope.sessionId, function* () {
    if (!(yield* q.insertBill(withCounts(bill)))) return false;
    // A continuation sent before the window the session counts now (a person wrote since, or resumed) is history:
    // the statement adds nothing for it, without the row read first.
    yield* q.addSpend(scope.sessionId, bill.cost ?? 0, bill.tokens ?? 0, now, bill.continuedAt);
    return true;
  });
}
