// Continuations from deadline to outcome. A due countdown becomes one `attempt()`: the guards once more at the
// deadline, OpenCode read again, the guards right before the prompt, the claim (the countdown fired and the injection
// recorded `pending` in one transaction, before OpenCode is called), the prompt call, and its outcome recorded —
// `sent`, `failed` or `unknown` — with the retry the failure plan (core/injection-outcome.ts) asks for. Never twice:
// a call that failed in a way that may have delivered it is looked for in the session before anything else happens
// (delivery-checks.ts), and an earlier uncertain one that arrived after all stops a new one from going out.
//
// Prompt calls run one at a time per session (a p-queue each) and at most `maxConcurrentInjections` at once in the
// process (one shared p-queue); the state changes of an attempt run in the session's lane, the call between them.
import PQueue from "p-queue";
import type { HostFacts } from "../core/decision-input.js";
import { explain } from "../core/explain.js";
import {
  mustLookUp,
  verdictAfterFailure,
  type CallFailure,
  type FailureVerdict,
  type RetryPlan,
} from "../core/injection-outcome.js";
import type { TodoSummary } from "../core/todos.js";
import { changeSession } from "../store/changes/change-session.js";
import { recordOutcome, type Outcome } from "../store/changes/record-outcome.js";
import type { SessionRow } from "../store/schema.js";
import type { EngineContext } from "./context.js";
import type { Armed, Countdowns, DueInfo } from "./countdowns.js";
import type { Decisions } from "./decisions.js";
import { prepareDelivery, type Delivery } from "./delivery.js";
import { DeliveryChecks } from "./delivery-checks.js";
import type { FactGatherer } from "./facts.js";
import { errorMessage, HostTimeoutError, mayHaveBeenDelivered, withTimeout } from "./host-calls.js";
import { BoundedMap } from "./session-memory.js";
import { StartWatch } from "./start-watch.js";
import type { StopNotices } from "./stop-notices.js";

export interface InjectorPeers {
  countdowns: Countdowns;
  decisions: Decisions;
  facts: FactGatherer;
  notices: StopNotices;
  /** The session is looked at again as if it had gone idle (an idle that came while this process was injecting). */
  lookAgain: (sessionId: string) => void;
}

export class Injector {
  readonly starts: StartWatch;
  readonly checks: DeliveryChecks;
  private readonly global: PQueue;
  /** Shutting down: attempts still waiting for the global cap do nothing when their turn comes. */
  private dropping = false;
  private readonly perSession = new Map<string, PQueue>();
  /** Message ids this process chose for its own continuations (their echo is not a person writing). */
  private readonly ownMessages = new BoundedMap<string, true>(1000);

  constructor(
    private readonly ctx: EngineContext,
    private readonly peers: InjectorPeers,
  ) {
    this.global = new PQueue({ concurrency: ctx.config.maxConcurrentInjections });
    this.starts = new StartWatch(ctx, peers.facts, (sessionId, injectionId, waitedMs) =>
      this.notStarted(sessionId, injectionId, waitedMs),
    );
    this.checks = new DeliveryChecks(ctx, this);
  }

  /** A countdown is due: its attempt runs after the session's earlier ones, within the global cap. */
  due(armed: Armed, info: DueInfo): void {
    const { sessionId } = armed.row;
    let queue = this.perSession.get(sessionId);
    if (!queue) {
      const created = new PQueue({ concurrency: 1 });
      queue = created;
      this.perSession.set(sessionId, created);
      created.on("idle", () => {
        if (this.perSession.get(sessionId) === created && created.size === 0 && created.pending === 0)
          this.perSession.delete(sessionId);
      });
    }
    void queue
      .add(() => this.global.add(async () => (this.dropping ? undefined : this.attempt(armed, info))))
      .catch((error: unknown) => this.ctx.failed("continuation", error));
  }

  /** A continuation of this session is queued or running in this process. */
  isBusy(sessionId: string): boolean {
    const queue = this.perSession.get(sessionId);
    return queue !== undefined && queue.size + queue.pending > 0;
  }

  isOwnMessage(messageId: string): boolean {
    return this.ownMessages.has(messageId);
  }

  // ── one attempt ───────────────────────────────────────────────────────────

  private async attempt(armed: Armed, info: DueInfo): Promise<void> {
    const { ctx } = this;
    const { sessionId } = armed.row;
    try {
      const row = await ctx.lanes.run(sessionId, () => this.atDeadline(armed, info));
      if (row === undefined) return;
      const facts = await this.peers.facts.gather(sessionId, this.inspectOptions(row));
      const delivery = await ctx.lanes.run(sessionId, () => this.beforePrompt(armed, info, facts));
      if (delivery) await this.deliver(delivery);
    } finally {
      const memory = ctx.memories.peek(sessionId);
      if (memory?.idleWhileInjecting && ctx.lifecycle.deciding) {
        memory.idleWhileInjecting = false;
        // After this job has left the session's queue, or the look would see it in flight again.
        ctx.timers.schedule(`reevaluate:${sessionId}`, 0, () => this.peers.lookAgain(sessionId));
      }
    }
  }

  private current(armed: Armed): boolean {
    return this.ctx.lifecycle.deciding && this.peers.countdowns.isCurrent(armed);
  }

  /** The guards at the deadline, on what events reported (no OpenCode read). The row when it goes on, else undefined. */
  private async atDeadline(armed: Armed, info: DueInfo): Promise<SessionRow | null | undefined> {
    const { countdowns, decisions } = this.peers;
    if (!this.current(armed) || !(await countdowns.stillArmed(armed))) return undefined;
    const { decision, row } = await decisions.decide(armed.row.sessionId, "deadline");
    if (decision.verdict === "continue") return row ?? null;
    const detail = { ...decision.detail, lateMs: info.lateMs };
    await countdowns.end(armed, { skipped: decision.reason, detail });
    return undefined;
  }

  /** The guards right before the prompt, on OpenCode's answers; then the claim. The delivery when it goes out. */
  private async beforePrompt(armed: Armed, info: DueInfo, facts: HostFacts): Promise<Delivery | undefined> {
    const { ctx } = this;
    const { countdowns, decisions } = this.peers;
    const { sessionId } = armed.row;
    if (!this.current(armed)) return undefined;
    decisions.rememberTodos(sessionId, facts);
    // An earlier continuation that failed or was lost in a timeout may have arrived after all: never send on top of it.
    const arrived = await this.checks.confirmEarlier(sessionId, facts.messages);
    if (arrived) {
      const detail = { stage: "before_prompt", delivered: arrived.id };
      await countdowns.end(armed, { skipped: "in_flight", detail });
      // Its turn ran, so the session is idle again: looked at once this job has left the queue (see attempt).
      ctx.memories.get(sessionId).idleWhileInjecting = true;
      return undefined;
    }
    const { decision, row } = await decisions.decide(sessionId, "before_prompt", facts);
    if (decision.verdict === "skip") {
      const retry = decision.reason === "todo_fetch_failed" ? decisions.retryTodoRead(sessionId, facts) : undefined;
      const detail = { ...decision.detail, ...retry?.detail };
      const ended = await countdowns.end(armed, { skipped: decision.reason, detail });
      // A countdown someone else ended meanwhile (the TUI's key) is owed no second look.
      if (ended && retry) await ctx.store.change(changeSession(ctx.scope(sessionId), ctx.clock.now(), retry.change));
      return undefined;
    }
    const delivery = prepareDelivery(ctx, { armed, info, facts, row, decision });
    this.ownMessages.set(delivery.request.messageId, true);
    if (!(await countdowns.claim(armed, delivery.injection, delivery.detail))) {
      ctx.log("debug", "countdown no longer ours at the prompt call", { sessionId, countdownId: armed.row.id });
      return undefined;
    }
    return delivery;
  }

  // ── the prompt call and its outcome ───────────────────────────────────────

  private async deliver(delivery: Delivery): Promise<void> {
    const { ctx } = this;
    const started = ctx.clock.monotonic();
    let failure: CallFailure | undefined;
    try {
      await withTimeout("prompt", ctx.config.promptTimeoutMs, (signal) => ctx.host.prompt(delivery.request, signal));
    } catch (error) {
      failure = {
        message: errorMessage(error),
        timeout: error instanceof HostTimeoutError,
        mayHaveBeenDelivered: mayHaveBeenDelivered(error),
      };
    }
    const verdict: FailureVerdict | { status: "sent"; detail: object } = failure
      ? verdictAfterFailure(
          failure,
          mustLookUp(failure) ? await this.checks.lookUpAfterFailure(delivery.injection) : "not_looked",
        )
      : { status: "sent", detail: {} };
    const latencyMs = ctx.clock.monotonic() - started;
    await ctx.lanes.run(delivery.injection.sessionId, () =>
      this.record(delivery, verdict, latencyMs, failure?.message),
    );
  }

  private async record(
    delivery: Delivery,
    verdict: FailureVerdict | { status: "sent"; detail: object },
    latencyMs: number,
    error = "",
  ): Promise<void> {
    const { ctx } = this;
    const { injection, detail, summary } = delivery;
    const { sessionId } = injection;
    const outcome: Outcome =
      verdict.status === "sent"
        ? { kind: "sent", latencyMs, detail: { ...detail, ...verdict.detail } }
        : verdict.status === "unknown"
          ? { kind: "unknown", error, timedOut: verdict.reason === "timeout", final: verdict.final, detail }
          : { kind: "failed", error, final: verdict.final, detail };
    const recorded = await ctx.store.change(recordOutcome(injection, outcome, ctx.clock.now(), ctx.config));
    if (outcome.kind === "sent") {
      ctx.log("info", "continuation sent", {
        sessionId,
        injectionId: injection.id,
        todosOpen: summary.open,
        latencyMs: Math.round(latencyMs),
      });
      if (!ctx.lifecycle.ending)
        this.starts.watch(sessionId, injection.id, injection.messageId!, delivery.signalsAtCall);
      return;
    }
    const next = recorded?.next ?? { retry: false, attempt: 0 };
    // Possibly delivered or not: the retry looks for it before sending anything (DeliveryChecks.confirmEarlier).
    ctx.log(
      next.retry ? "warn" : "error",
      `continuation ${outcome.kind === "unknown" ? "outcome unknown" : "failed"}`,
      { sessionId, injectionId: injection.id, error, attempt: next.attempt },
    );
    await this.afterFailure(sessionId, next, summary, { retryOf: injection.id, reason: "backoff" });
  }

  /**
   * A sent continuation whose turn never started (OpenCode accepted it and did nothing): an attempt like any failure.
   * Counted once per injection. Runs in the session's lane.
   */
  async notStarted(sessionId: string, injectionId: string, waitedMs: number): Promise<void> {
    const { ctx } = this;
    if (!this.checks.firstNotStarted(injectionId)) return;
    const of = { ...ctx.scope(sessionId), id: injectionId };
    const outcome = { kind: "not_started", waitedMs } as const;
    const recorded = await ctx.store.change(recordOutcome(of, outcome, ctx.clock.now(), ctx.config));
    ctx.log("warn", "continuation accepted but its turn never started", {
      sessionId,
      injectionId,
      waitedMs: Math.round(waitedMs),
    });
    const next = recorded?.next ?? { retry: false, attempt: 0 };
    await this.afterFailure(sessionId, next, undefined, { retryOf: injectionId, reason: "not_started" });
  }

  /** Arms the retry the plan asks for (unless something newer counts down already), or tells the user it gave up. */
  async afterFailure(
    sessionId: string,
    next: RetryPlan,
    summary: TodoSummary | undefined,
    detail: Record<string, unknown>,
  ): Promise<void> {
    const { ctx } = this;
    if (ctx.lifecycle.ending) return;
    if (!next.retry) {
      const explanation = explain("injection_failed", "gave_up", { attempt: next.attempt, final: true });
      return this.peers.notices.tell(sessionId, "gave_up", explanation);
    }
    if (this.peers.countdowns.has(sessionId)) return;
    await this.peers.countdowns.arm({ sessionId, summary, attempt: next.attempt, delayMs: next.delayMs, detail });
  }

  inspectOptions(row: SessionRow | null | undefined) {
    return { detectTextQuestions: this.ctx.config.detectTextQuestions, answerOf: row?.pauseMessageId ?? null };
  }

  // ── shutdown ──────────────────────────────────────────────────────────────

  /**
   * Drops the attempts not started yet (their countdowns stay armed for a successor) and stops watching starts.
   * The global queue is not cleared but drained of no-ops: a session's queue waits for its attempt's turn there, and
   * a cleared entry would never settle, holding that session's queue (and `drain()`, and shutdown) for ever.
   */
  stopQueued(): void {
    this.dropping = true;
    for (const queue of this.perSession.values()) queue.clear();
    this.starts.clear();
  }

  /** Resolves when every attempt queued or running has finished. */
  async drain(): Promise<void> {
    while (
      this.global.size + this.global.pending > 0 ||
      [...this.perSession.values()].some((q) => q.size + q.pending > 0)
    ) {
      await Promise.all([this.global.onIdle(), ...[...this.perSession.values()].map((q) => q.onIdle())]);
    }
  }
}
