// What one continuation cost: the turn it caused is every assistant message whose `parentID` is the continuation's
// message id (OpenCode makes one per model call; a person's message arriving mid-turn takes the later ones, so they
// bill to the person). Pure: the session's messages in, the bill out.
//
// OpenCode 1.18.33 adds each step's cost to its message's `cost` but replaces the message's `tokens` with the last
// step's, so tokens are summed from the `step-finish` parts; a message without any (a step that failed mid-stream, an
// older OpenCode) counts its own `tokens` once. A turn that failed, was aborted or wrote no text is billed all the same.
import type { Tokens, Usage } from "./fields.js";
import type { SessionMessage } from "./messages.js";

/** How the turn ended: `interrupted` while a message is still open (or OpenCode died), `no_turn` when none answered. */
export type TurnOutcome = "completed" | "error" | "aborted" | "interrupted" | "no_turn";

export interface Bill {
  outcome: TurnOutcome;
  /** The name of the error the turn ended with, if it did. */
  error?: string;
  finish?: string;
  providerId?: string;
  modelId?: string;
  messages: number;
  steps: number;
  toolCalls: number;
  tokens: Tokens;
  /** The five kinds together: what a token budget counts. */
  totalTokens: number;
  cost: number;
  /** OpenCode's clock: the first message created, the last completed. */
  startedAt?: number;
  endedAt?: number;
}

const ABORTED = "MessageAbortedError";

export function noTokens(): Tokens {
  return { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 };
}

export function addTokens(a: Tokens, b: Tokens): Tokens {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    reasoning: a.reasoning + b.reasoning,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
  };
}

export function tokenTotal(t: Tokens): number {
  return t.input + t.output + t.reasoning + t.cacheRead + t.cacheWrite;
}

/** One message's bill: its steps' tokens (else its own), and its cost (else its steps'). */
function messageUsage(message: SessionMessage): Usage & { steps: number } {
  const steps = message.parts.flatMap((p) => (p.type === "step-finish" && p.usage ? [p.usage] : []));
  const stepTokens = steps.reduce((sum, s) => addTokens(sum, s.tokens), noTokens());
  const stepCost = steps.reduce((sum, s) => sum + s.cost, 0);
  return {
    steps: steps.length,
    tokens: steps.length > 0 ? stepTokens : (message.usage?.tokens ?? noTokens()),
    cost: message.usage?.cost ?? stepCost,
  };
}

function outcomeOf(answers: readonly SessionMessage[]): { outcome: TurnOutcome; error?: string } {
  const last = answers.at(-1);
  if (!last) return { outcome: "no_turn" };
  if (last.error) return { outcome: last.error.name === ABORTED ? "aborted" : "error", error: last.error.name };
  return { outcome: answers.every((m) => m.completedAt !== undefined) ? "completed" : "interrupted" };
}

/** The bill of the turn that answered `messageId`, from the session's messages (oldest first). */
export function billTurn(messages: readonly SessionMessage[], messageId: string): Bill {
  const answers = messages.filter((m) => m.role === "assistant" && m.parentId === messageId);
  let tokens = noTokens();
  let cost = 0;
  let steps = 0;
  for (const message of answers) {
    const usage = messageUsage(message);
    tokens = addTokens(tokens, usage.tokens);
    cost += usage.cost;
    steps += usage.steps;
  }
  const first = answers[0];
  const last = answers.at(-1);
  const bill: Bill = {
    ...outcomeOf(answers),
    messages: answers.length,
    steps,
    toolCalls: answers.reduce((n, m) => n + m.parts.filter((p) => p.type === "tool").length, 0),
    tokens,
    totalTokens: tokenTotal(tokens),
    cost,
  };
  if (last?.finish) bill.finish = last.finish;
  if (first?.providerId) bill.providerId = first.providerId;
  if (first?.modelId) bill.modelId = first.modelId;
  if (first?.createdAt !== undefined) bill.startedAt = first.createdAt;
  if (last?.completedAt !== undefined) bill.endedAt = last.completedAt;
  return bill;
}
