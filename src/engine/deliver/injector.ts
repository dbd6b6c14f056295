// Continuations from deadline to outcome. A due countdown becomes one `attempt()` in the session's queue: the countdown
// still armed, OpenCode read again, the guards right before the prompt, the claim (the countdown fired and the
// injection recorded `pending` in one transaction, before OpenCode is called), the prompt call, and its outcome
// recorded — `sent`, `failed` or `unknown` — with the retry the plan asks for. Never twice: a call that failed in a way
// that may have delivered it is looked for in the session before anything else happens, and an earlier uncertain one
// that arrived after all stops a new one from going out. The state changes of an attempt run in the session's lane,
// the reads and the call between them.
import type { HostFacts } from "../../core/decision-input.js";
import {
  mustLookUp,
  verdictAfterFailure,
  type CallFailure,
  type FailureVerdict,
} from "../../core/injection-outcome.js";
import { changeSession } from "../../store/changes/change-session.js";
import { sessionState, unresolvedContinuation } from "../../store/reads.js";
import type { InjectionRow, SessionRow } from "../../store/schema.js";
import type { EngineContext } from "../context.js";
import { inspectOptions, type FactGatherer } from "../read/facts.js";
import type { Judge } from "../decide/judge.js";
import type { Looks } from "../decide/looks.js";
import { errorMessage, HostTimeoutError, mayHaveBeenDelivered, withTimeout } from "../host-calls.js";
import type { OwnMessageIds } from "../memory/own-messages.js";
import type { SessionMemories } from "../memory/session-memory.js";
import type { Countdowns, DueInfo } from "../wait/countdowns.js";
import type { Armed } from "../wait/held-countdowns.js";
import { prepareContinuation, type Continuation } from "./continuation.js";
import type { Lookups } from "./lookups.js";
import type { Outcome, Outcomes } from "./outcomes.js";
import type { DeliveryQueue } from "../wait/queue.js";
import type { Reconciler } from "./reconciler.js";
import type { StartWatch } from "./start-watch.js";

export interface InjectorParts {
  memories: SessionMemories;
  queue: DeliveryQueue;
  countdowns: Countdowns;
  judge: Judge;
  facts: FactGatherer;
  lookups: Lookups;
  reconciler: Reconciler;
  outcomes: Outcomes;
  starts: StartWatch;
  /** Message ids chosen for the enforcer's own continuations (their echo is not a person writing). */
  ownMessages: OwnMessageIds;
  /** An idle that came while a continuation was in flight is looked at once it settled. */
  looks: Looks;
}

/** How long an attempt waits to look for an earlier continuation of unknown outcome before it gives up. */
const LOOK_WAIT_MS = 15 * 60_000;
const MIN_LOOK_DELAY_MS = 1000;

type Verdict = FailureVerdict | { status: "sent"; detail: object };

export class Injector {
  constructor(
    private readonly ctx: EngineContext,
    private readonly p: InjectorParts,
  ) {}

  /** A countdown is due: its attempt runs after the session's earlier ones, within the global cap. */
  due(armed: Armed, info: DueInfo): void {
    const dueAt = this.ctx.clock.monotonic();
    this.p.queue.add(armed.row.sessionId, () => this.attempt(armed, info, dueAt));
  }

  /** `dueAt`: when the countdown came due (monotonic); the `fired` row says how long it queued and was checked. */
  private async attempt(armed: Armed, info: DueInfo, dueAt: number): Promise<void> {
    const { ctx } = this;
    const { sessionId } = armed.row;
    const startedAt = ctx.clock.monotonic();
    try {
      const row = await ctx.lanes.run(sessionId, () => this.atDeadline(armed));
      if (row === undefined) return;
      const facts = await this.p.facts.gather(sessionId, inspectOptions(ctx.config, row));
      const continuation = await ctx.lanes.run(sessionId, () =>
        this.beforePrompt(armed, info, facts, { dueAt, startedAt }),
      );
      if (continuation) await this.deliver(continuation);
    } finally {
      if (this.p.memories.peek(sessionId)?.takeIdleWhileInjecting() && ctx.lifecycle.deciding) {
        // After this job has left the session's queue, or the look would see it in flight again.
        ctx.timers.schedule(`reevaluate:${sessionId}`, 0, () => void this.p.looks.evaluate(sessionId, "reevaluate"));
      }
    }
  }

  private current(armed: Armed): boolean {
    return this.ctx.lifecycle.deciding && this.p.countdowns.isCurrent(armed);
  }

  /**
   * The countdown at its deadline: still this process's and still armed in the database? The session's row when it
   * is (what OpenCode is read with), else undefined. No guards here: those right before the prompt judge on OpenCode's
   * answers what changed during the wait, and an error seen only in events is judged from the messages too.
   */
  private async atDeadline(armed: Armed): Promise<SessionRow | null | undefined> {
    if (!this.current(armed)) return undefined;
    // The countdown and the row in one read: the session's state names its armed countdown.
    const state = await this.ctx.store.read(sessionState(armed.row.sessionId));
    if (!this.p.countdowns.armedAsRead(armed, state.armed)) return undefined;
    return state.row ?? null;
  }

  /** The guards right before the prompt, on OpenCode's answers; then the claim. The continuation when it goes out. */
  private async beforePrompt(
    armed: Armed,
    info: DueInfo,
    facts: HostFacts,
    timing: { dueAt: number; startedAt: number },
  ): Promise<Continuation | undefined> {
    const { ctx } = this;
    const { countdowns, judge } = this.p;
    const { sessionId } = armed.row;
    if (!this.current(armed)) return undefined;
    // The list known at the deadline (a `todo.updated` during the wait, else the look's read) is judged too.
    const todosAtDeadline = this.p.memories.peek(sessionId)?.todos;
    judge.rememberTodos(sessionId, facts);
    // An earlier continuation that failed or was lost in a timeout may have arrived after all: never send on top of it.
    const arrived = await this.p.reconciler.confirmEarlier(sessionId, facts.messages);
    if (arrived) {
      await countdowns.end(armed, { skipped: "in_flight", detail: { stage: "before_prompt", delivered: arrived.id } });
      // Its turn ran, so the session is idle again: looked at once this job has left the queue (see attempt).
      this.p.memories.get(sessionId).idleWhileInjecting();
      return undefined;
    }
    // A retry (attempt 1 and on) re-sends a continuation whose turn never came: the turn before was judged for it.
    const retrying = armed.row.attempt > 0;
    const { decision, row } = await judge.decide(sessionId, "before_prompt", facts, { retrying, todosAtDeadline });
    if (decision.verdict === "skip") {
      const retry =
        decision.reason === "todo_fetch_failed" ? judge.retryTodoRead(sessionId, facts, armed.row.armedAt) : undefined;
      const detail = { ...decision.detail, ...retry?.detail };
      const ended = await countdowns.end(
        armed,
        { skipped: decision.reason, detail },
        undefined,
        judge.telling(sessionId, facts),
      );
      if (ended) judge.endedBySkip();
      // A countdown someone else ended meanwhile (the TUI's key) is owed no second look.
      if (ended && retry) await ctx.store.change(changeSession(ctx.scope(sessionId), ctx.clock.now(), {}, retry.look));
      return undefined;
    }
    if (decision.verdict === "verify") {
      // Every todo closed during the wait: the check of the finished list comes first, in a look owed now (durably,
      // and made once this job has left the queue, as for an idle seen while injecting).
      const detail = { ...decision.detail, stage: "before_prompt", verifying: decision.command };
      if (!(await countdowns.end(armed, { skipped: "in_flight", detail }))) return undefined;
      await ctx.store.change(changeSession(ctx.scope(sessionId), ctx.clock.now(), {}, { owe: ctx.clock.now() }));
      this.p.memories.get(sessionId).idleWhileInjecting();
      return undefined;
    }
    if (!facts.messages) {
      const unresolved = await ctx.store.read(unresolvedContinuation(sessionId));
      if (unresolved) return this.waitToLook(armed, unresolved);
    }
    const turnSignals = this.p.memories.get(sessionId).turnSignals;
    const checked = {
      queuedMs: Math.round(timing.startedAt - timing.dueAt),
      checkMs: Math.round(ctx.clock.monotonic() - timing.startedAt),
    };
    const continuation = prepareContinuation(ctx, { armed, info, checked, facts, row, decision, turnSignals });
    this.p.ownMessages.choose(continuation.request.messageId, continuation.injection.id);
    if (!(await countdowns.claim(armed, continuation.injection, continuation.detail))) {
      ctx.log("debug", "countdown no longer ours at the prompt call", { sessionId, countdownId: armed.row.id });
      return undefined;
    }
    return continuation;
  }

  /**
   * An earlier continuation's outcome is unknown and the session's messages cannot be read to look for it: sending now
   * could deliver it twice. The attempt waits, looking again after as long as it has waited so far (within the retry
   * delays), and gives up after `LOOK_WAIT_MS` without sending; every later attempt meets the same rule until the
   * messages can be read. Runs in the session's lane.
   */
  private async waitToLook(armed: Armed, unresolved: InjectionRow): Promise<undefined> {
    const { ctx } = this;
    const { sessionId } = armed.row;
    const { retryBaseMs, retryMaxMs } = ctx.config;
    const waitedMs = Math.max(0, ctx.clock.now() - unresolved.createdAt);
    const gaveUp = waitedMs >= LOOK_WAIT_MS;
    const delayMs = Math.max(MIN_LOOK_DELAY_MS, Math.min(retryMaxMs, Math.max(retryBaseMs, waitedMs)));
    const detail = {
      stage: "before_prompt",
      awaiting: unresolved.id,
      messages: "unreadable",
      waitedMs,
      ...(gaveUp ? { gaveUp: true } : { lookInMs: delayMs }),
    };
    const ended = await this.p.countdowns.end(armed, { skipped: "in_flight", detail });
    if (!ended || ctx.lifecycle.stopAsked) return undefined;
    if (gaveUp) {
      ctx.log("warn", "gave up waiting to look for a continuation whose outcome is unknown; nothing sent", {
        sessionId,
        injectionId: unresolved.id,
        waitedMs,
      });
      return undefined;
    }
    const cause = { retryOf: unresolved.id, reason: "unreadable" };
    await this.p.countdowns.arm({ sessionId, attempt: armed.row.attempt, delayMs, detail: cause });
    return undefined;
  }

  // ── the prompt call and its outcome ───────────────────────────────────────

  private async deliver(continuation: Continuation): Promise<void> {
    const { ctx } = this;
    const started = ctx.clock.monotonic();
    let failure: CallFailure | undefined;
    try {
      await withTimeout("prompt", ctx.config.promptTimeoutMs, (signal) =>
        ctx.host.prompt(continuation.request, signal),
      );
    } catch (error) {
      failure = {
        message: errorMessage(error),
        timeout: error instanceof HostTimeoutError,
        mayHaveBeenDelivered: mayHaveBeenDelivered(error),
      };
    }
    const verdict: Verdict = failure
      ? verdictAfterFailure(
          failure,
          mustLookUp(failure) ? await this.p.lookups.afterFailure(continuation.injection) : "not_looked",
        )
      : { status: "sent", detail: {} };
    const latencyMs = ctx.clock.monotonic() - started;
    await ctx.lanes.run(continuation.injection.sessionId, () =>
      this.record(continuation, verdict, latencyMs, failure?.message),
    );
  }

  private async record(continuation: Continuation, verdict: Verdict, latencyMs: number, error = ""): Promise<void> {
    const { ctx } = this;
    const { injection, detail, summary } = continuation;
    const { sessionId } = injection;
    const outcome: Outcome =
      verdict.status === "sent"
        ? { kind: "sent", latencyMs, detail: { ...detail, ...verdict.detail } }
        : verdict.status === "unknown"
          ? { kind: "unknown", error, timedOut: verdict.reason === "timeout", final: verdict.final, detail }
          : { kind: "failed", error, final: verdict.final, detail };
    const recorded = await this.p.outcomes.record(injection, outcome);
    if (outcome.kind === "sent") {
      const todosOpen = summary.open;
      ctx.log("info", "continuation sent", {
        sessionId,
        injectionId: injection.id,
        todosOpen,
        latencyMs: Math.round(latencyMs),
      });
      const startedMeanwhile = this.p.memories.get(sessionId).turnSignals !== continuation.signalsAtCall;
      if (!ctx.lifecycle.stopAsked)
        this.p.starts.watch(sessionId, injection.id, injection.messageId!, startedMeanwhile);
      return;
    }
    const next = recorded?.next ?? { retry: false, attempt: 0 };
    // Possibly delivered or not: the retry looks for it before sending anything (Reconciler.confirmEarlier).
    const what = outcome.kind === "unknown" ? "outcome unknown" : "failed";
    const extra = { sessionId, injectionId: injection.id, error, attempt: next.attempt };
    ctx.log(next.retry ? "warn" : "error", `continuation ${what}`, extra);
    await this.p.outcomes.retry(sessionId, next, summary, { retryOf: injection.id, reason: "backoff" });
  }
}
