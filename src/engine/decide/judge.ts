// One decision of the guard chain for one session: its row and what answered its idle (read now), what this process saw
// of it, and what OpenCode answered, assembled by core/decision-input.ts and judged by core/decide.ts. A skip is
// recorded here, with the stop notice it may owe. Called in the session's lane.
import { decide } from "../../core/decide.js";
import type { Decision, Stage } from "../../core/decision.js";
import { decisionInput, type HostFacts } from "../../core/decision-input.js";
import { retryDetail } from "../../core/injection-outcome.js";
import { afterTodoReadFailed } from "../../core/transitions.js";
import { summarize, type Todo } from "../../core/todos.js";
import { skip as skipChange } from "../../store/changes/skip.js";
import { TAKE, type LookOwed } from "../../store/changes/look-owed.js";
import { sinceIdle, spending } from "../../store/reads.js";
import { ESTIMATE_FROM } from "../../core/budget.js";
import type { Billing } from "./billing.js";
import type { SessionRow } from "../../store/schema.js";
import type { EngineContext } from "../context.js";
import type { DeliveryQueue } from "../wait/queue.js";
import type { SessionMemories } from "../memory/session-memory.js";
import type { StopNotices } from "./stop-notices.js";
import type { Telling } from "../../store/changes/tell-stop.js";

export type Skip = Extract<Decision, { verdict: "skip" }>;

export class Judge {
  constructor(
    private readonly ctx: EngineContext,
    private readonly memories: SessionMemories,
    /** Continuations queued or in flight in this process. */
    private readonly queue: DeliveryQueue,
    private readonly notices: StopNotices,
    private readonly billing: Billing,
  ) {}

  /**
   * `idleSince`: when the idle that the look which read `facts` judges was seen. What answered that idle since then in
   * another process (the person's key, a continuation) is asked of the database, since no event brought it here.
   * `todosAtDeadline`: right before the prompt, the todos this process knew when the countdown ended, before OpenCode
   * was read again.
   */
  async decide(
    sessionId: string,
    stage: Stage,
    facts?: HostFacts,
    {
      idleSince,
      retrying,
      todosAtDeadline,
    }: { idleSince?: number; retrying?: boolean; todosAtDeadline?: readonly Todo[] } = {},
  ): Promise<{ decision: Decision; row: SessionRow | undefined }> {
    const { ctx } = this;
    // The last continuation's turn is billed first, so that the budgets count it.
    if (facts) await this.billing.record(sessionId, facts, stage);
    const asked = ctx.clock.now();
    const { row, pending, userCancelledAt, answeredBy, parked, verification } = await ctx.store.read(
      sinceIdle(sessionId, idleSince, asked, { verify: ctx.config.verify !== null }),
    );
    const { maxContinuationCost, maxContinuationTokens, dailyContinuationCost } = ctx.config;
    const spent =
      facts && (maxContinuationCost > 0 || maxContinuationTokens > 0 || dailyContinuationCost > 0)
        ? await ctx.store.read(spending(sessionId, asked, { daily: dailyContinuationCost > 0, recent: ESTIMATE_FROM }))
        : undefined;
    // At the deadline and before the prompt, the job asking is the one in this process's queue: only a continuation
    // recorded `pending` (by this process or another) counts then.
    const inFlight = (stage === "idle" && this.queue.isBusy(sessionId)) || pending;
    const memory = this.memories.get(sessionId);
    const seen = {
      status: memory.status,
      parentId: memory.parentId,
      pendingRequests: memory.openRequests,
      compactedRecently: memory.compactedRecently,
      todos: todosAtDeadline ?? memory.todos,
    };
    const now = ctx.clock.now();
    const input = decisionInput({
      stage,
      now,
      config: ctx.config,
      row,
      seen,
      facts,
      inFlight,
      retrying,
      userCancelledAt,
      answeredBy,
      parked,
      verification,
      spending: spent,
    });
    return { decision: decide(input), row };
  }

  /** What OpenCode answered for the todos, remembered; an answer ends a run of failed reads. */
  rememberTodos(sessionId: string, facts: HostFacts): void {
    if (!Array.isArray(facts.todos)) return;
    this.memories.get(sessionId).readTodos(facts.todos);
  }

  /**
   * A `todo_fetch_failed` skip's detail and session change: the session is owed another look after a backoff
   * (`recheck_at`, so a restart keeps it), or, after `maxRetries` failed reads in a row, none until the next idle.
   * The owed look judges the idle seen at `idleSince` (`owed_since`): a continuation fired since then answered it.
   */
  retryTodoRead(
    sessionId: string,
    facts: HostFacts,
    idleSince: number,
  ): { detail: Record<string, unknown>; look: LookOwed } {
    const memory = this.memories.get(sessionId);
    const plan = afterTodoReadFailed(memory.todoReadFailures, this.ctx.config);
    memory.failedTodoReads(plan.retry ? plan.attempt : 0);
    return {
      detail: { ...(facts.todoError ? { error: facts.todoError } : {}), ...retryDetail(plan) },
      look: plan.retry ? { owe: this.ctx.clock.now() + plan.delayMs, since: idleSince } : TAKE,
    };
  }

  /** What ending a countdown with a guard's skip writes if the skip is a stop to tell (tell-stop.ts). */
  telling(sessionId: string, facts?: HostFacts): Telling {
    const todos = Array.isArray(facts?.todos) ? facts.todos : this.memories.get(sessionId).todos;
    return this.notices.telling(todos ? summarize(todos) : undefined);
  }

  /** A countdown ended by a guard's skip with a telling: the stop it told, if any, is sent without waiting. */
  endedBySkip(): void {
    this.notices.mayHaveTold();
  }

  /**
   * A skip is a decision: its audit row, with what it does to the look owed and the stop it may tell (the notice
   * carries the todos as this process last saw them), in one transaction.
   */
  async recordSkip(sessionId: string, skip: Skip, extra: Record<string, unknown>, look?: LookOwed) {
    const { ctx } = this;
    const detail = { ...skip.detail, ...extra };
    const tell = this.telling(sessionId);
    const told = await ctx.store.change(
      skipChange(ctx.scope(sessionId), ctx.clock.now(), skip.reason, detail, { look, tell }),
    );
    this.notices.told(sessionId, skip.reason, detail, told);
  }
}
