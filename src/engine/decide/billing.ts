// Bills each continuation's turn once it is over, from what a look already read: every assistant message answering
// the continuation, whether the todos moved meanwhile (against the ledger the continuation went out with), the files
// the turn made new (against the session's file ledger), and the whole session's spend, of which the bill is a share.
// Nothing on the hot path: a look reads all this anyway, and each turn is written once (recordBill). After a restart,
// the turns that ended while no enforcer was there are billed from the session's messages.
import { tokenTotal } from "../../core/bill.js";
import type { Stage } from "../../core/decision.js";
import type { HostFacts } from "../../core/decision-input.js";
import { isOpen, progressSince, parseLedger, type Todo } from "../../core/todos.js";
import { parsePatch } from "../../core/transitions.js";
import { judgeFiles, parseFileLedger } from "../../core/work.js";
import { recordBill } from "../../store/changes/record-bill.js";
import type { NewBill } from "../../store/schema.js";
import { billContext, unbilledOf, unbilledIn } from "../../store/reads.js";
import { BoundedMap } from "../bounded-map.js";
import type { EngineContext } from "../context.js";
import type { FactGatherer } from "../read/facts.js";

/** How far a todo has come in a ledger: 2 is closed. */
const CLOSED = 2;
/** How far back a restart looks for continuations left without a bill. */
export const UNBILLED_WINDOW_MS = 24 * 3600_000;

export class Billing {
  /** Turns this process billed (or found billed): not written again. */
  private readonly billed = new BoundedMap<string, true>(2000);

  constructor(
    private readonly ctx: EngineContext,
    private readonly facts: FactGatherer,
  ) {}

  /**
   * Bills the turn of the session's last continuation when the messages say it is over. A turn whose last message is
   * still open is billed only once it surely ended: at an errored turn's first idle its last message is not final yet,
   * while right before the next prompt (or after a restart, the session idle) a message still open means OpenCode
   * stopped in the middle of it.
   */
  async record(sessionId: string, facts: HostFacts, stage: Stage | "restart"): Promise<boolean> {
    const turn = facts.lastTurn;
    if (!turn || this.billed.has(turn.injectionId)) return false;
    const unfinished = turn.bill.outcome === "interrupted" || turn.bill.outcome === "no_turn";
    if (unfinished && stage !== "before_prompt" && stage !== "restart") return false;
    const { ctx } = this;
    const { injection, row } = await ctx.store.read(billContext(turn.injectionId, sessionId));
    if (!injection || injection.sessionId !== sessionId) return false;
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
    const written = await ctx.store.change(
      recordBill({ sessionId, directory: injection.directory, server: injection.server }, bill, now),
    );
    this.billed.set(turn.injectionId, true);
    return written;
  }

  /**
   * A look that ended before reading OpenCode (a guard said no on what was known: the todos are done, the budget is
   * spent, the session is stopped) still bills the session's last continuation, whose turn may be the last it gets.
   * Read only when the database says that continuation has no bill, and tried once per process: a continuation whose
   * turn the messages do not show (it never arrived) is not asked about at every idle.
   */
  async settle(sessionId: string): Promise<void> {
    const { ctx } = this;
    const unbilled = await ctx.store.read(unbilledOf(sessionId));
    if (!unbilled || this.billed.has(unbilled)) return;
    this.billed.set(unbilled, true);
    const facts = await this.facts.gather(sessionId);
    if (facts.lastTurn?.injectionId !== unbilled) return;
    this.billed.delete(unbilled);
    await ctx.lanes.run(sessionId, () => this.record(sessionId, facts, "idle"));
  }

  /**
   * At a start: the latest continuation of each session of the scope that went out without being billed, billed now
   * if its session is idle (a busy one is billed by the look at its idle). Only a continuation whose turn is among the
   * messages a look reads is billed; an older one stays unbilled rather than be billed as if nothing answered it.
   * One session at a time, in its lane: a start is not slowed by a burst of reads.
   */
  async recover(): Promise<number> {
    const { ctx } = this;
    const unbilled = await ctx.store.read(unbilledIn(ctx.followed, ctx.clock.now() - UNBILLED_WINDOW_MS));
    const latest = new Map(unbilled.map((row) => [row.sessionId, row.injectionId]));
    let billed = 0;
    for (const [sessionId, injectionId] of latest) {
      const written = await ctx.lanes.post(sessionId, async () => {
        const facts = await this.facts.gather(sessionId);
        if (facts.status === "busy" || facts.status === "retry" || facts.lastTurn?.injectionId !== injectionId)
          return false;
        return this.record(sessionId, facts, "restart");
      });
      if (written) billed++;
    }
    return billed;
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
