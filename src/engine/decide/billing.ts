// Bills each continuation's turn once it is over, from what a look already read: every assistant message answering
// the continuation, whether the todos moved meanwhile (against the ledger the continuation went out with), the files
// the turn made new (against the session's file ledger), and the whole session's spend, of which the bill is a share.
// Nothing on the hot path: a look reads all this anyway, and each turn is written once (recordBill).
import { tokenTotal } from "../../core/bill.js";
import type { Stage } from "../../core/decision.js";
import type { HostFacts } from "../../core/decision-input.js";
import { isOpen, progressSince, parseLedger, type Todo } from "../../core/todos.js";
import { parsePatch } from "../../core/transitions.js";
import { judgeFiles, parseFileLedger } from "../../core/work.js";
import { recordBill } from "../../store/changes/record-bill.js";
import type { NewBill } from "../../store/schema.js";
import { billContext } from "../../store/reads.js";
import { BoundedMap } from "../bounded-map.js";
import type { EngineContext } from "../context.js";

/** How far a todo has come in a ledger: 2 is closed. */
const CLOSED = 2;

export class Billing {
  /** Turns this process billed (or found billed): not written again. */
  private readonly billed = new BoundedMap<string, true>(2000);

  constructor(private readonly ctx: EngineContext) {}

  /**
   * Bills the turn of the session's last continuation when the messages say it is over. A turn whose last message is
   * still open is billed only right before the next prompt: at an errored turn's first idle its last message is not
   * final yet, while by the next prompt a message still open means OpenCode stopped in the middle of it.
   */
  async record(sessionId: string, facts: HostFacts, stage: Stage): Promise<void> {
    const turn = facts.lastTurn;
    if (!turn || this.billed.has(turn.injectionId)) return;
    const unfinished = turn.bill.outcome === "interrupted" || turn.bill.outcome === "no_turn";
    if (unfinished && stage !== "before_prompt") return;
    const { ctx } = this;
    const { injection, row } = await ctx.store.read(billContext(turn.injectionId, sessionId));
    if (!injection || injection.sessionId !== sessionId) return;
    const now = ctx.clock.now();
    const bill: NewBill = {
      ...billColumns(turn.bill),
      ...todoProgress(injection.onSent, facts.todos),
      filesChanged: filesChanged(facts, row?.fileLedger),
      sessionCost: facts.sessionSpend?.cost ?? null,
      sessionTokens: facts.sessionSpend ? tokenTotal(facts.sessionSpend.tokens) : null,
      injectionId: injection.id,
      sessionId,
      directory: injection.directory,
      server: injection.server,
      messageId: turn.messageId,
      continuedAt: injection.createdAt,
      recordedAt: now,
    };
    await ctx.store.change(
      recordBill({ sessionId, directory: injection.directory, server: injection.server }, bill, now),
    );
    this.billed.set(turn.injectionId, true);
  }
}

function billColumns(
  bill: NonNullable<HostFacts["lastTurn"]>["bill"],
): Omit<NewBill, "injectionId" | "sessionId" | "directory" | "messageId" | "continuedAt" | "recordedAt"> {
  return {
    outcome: bill.outcome,
    error: bill.error ?? null,
    finish: bill.finish ?? null,
    providerId: bill.providerId ?? null,
    modelId: bill.modelId ?? null,
    messages: bill.messages,
    steps: bill.steps,
    toolCalls: bill.toolCalls,
    inputTokens: bill.tokens.input,
    outputTokens: bill.tokens.output,
    reasoningTokens: bill.tokens.reasoning,
    cacheReadTokens: bill.tokens.cacheRead,
    cacheWriteTokens: bill.tokens.cacheWrite,
    tokens: bill.totalTokens,
    cost: bill.cost,
    startedAt: bill.startedAt ?? null,
    endedAt: bill.endedAt ?? null,
  };
}

/**
 * Files the turn made new, judged against the session's file ledger before the turn went into it; known only while the
 * latest turn read is the continuation's (a person's message since leaves it null).
 */
function filesChanged(facts: HostFacts, ledger: string | null | undefined): number | null {
  if (facts.messages?.replyToLastInjection === undefined) return null;
  const turn = facts.messages.turnFiles;
  return turn?.answers === "own" ? judgeFiles(parseFileLedger(ledger), turn).changed : 0;
}

/** What the turn bought: todos closed since the continuation went out, and whether any moved forward. */
function todoProgress(onSent: string | null, todos: HostFacts["todos"]): Pick<NewBill, "todosClosed" | "progressed"> {
  const ledger = parseLedger(parsePatch(onSent).todoSnapshot);
  if (!ledger || !Array.isArray(todos)) return { todosClosed: null, progressed: null };
  const closed = (todos as Todo[]).filter((t) => !isOpen(t) && (ledger.ranks[t.content] ?? 0) < CLOSED).length;
  return { todosClosed: closed, progressed: progressSince(ledger, todos) ? 1 : 0 };
}
