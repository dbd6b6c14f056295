// An idle, judged. When a session goes idle (or the enforcer owes it a look: after a restart, a resume, sub-sessions
// that finished), the guards run first on what is known without asking OpenCode; if they pass, OpenCode is read (todos,
// messages, status, sub-sessions, agents) and the guards run again on its answers: arm a countdown, or record why not.
// The look is durable while OpenCode is read (`sessions.recheck_at`): a process that dies meanwhile is followed by one
// that looks again.
import { session, sessionsToRecheck } from "../../store/reads.js";
import { armPatch, progressDetail, type HostFacts } from "../../core/decision-input.js";
import { changeSession } from "../../store/changes/change-session.js";
import { expireOwedLook, oweLook, TAKE } from "../../store/changes/look-owed.js";
import { isNews } from "../../store/changes/tell-stop.js";
import type { OwedLook } from "../../store/port.js";
import type { SessionRow } from "../../store/schema.js";
import { BoundedMap } from "../bounded-map.js";
import type { EngineContext } from "../context.js";
import type { DeliveryQueue } from "../wait/queue.js";
import type { SessionMemories } from "../memory/session-memory.js";
import type { Countdowns } from "../wait/countdowns.js";
import { inspectOptions, type FactGatherer } from "../read/facts.js";
import type { Billing } from "./billing.js";
import type { Judge } from "./judge.js";
import type { LimitParks } from "../wait/limit-parks.js";
import type { Verifications } from "../wait/verifications.js";

/** A precheck's answer: a stop to tell waits for the last continuation's bill. */
const BILL_FIRST = Symbol("bill first");

/** What led to an evaluation: an idle event, or a look the enforcer owed the session. */
export type Trigger = "idle" | "reevaluate" | "recheck" | "restart" | "children_done" | "resume" | "checked";

/** A parent held back by busy sub-sessions is looked at again at least this often (if an event is missed). */
const CHILDREN_RECHECK_MS = 60_000;

/**
 * How a look began: when the idle it judges was seen (the look's start, or when it was owed if earlier), and the
 * session's activity count then. What happened since is judged by them: a key pressed or a continuation fired
 * since that idle (in any process) answered it.
 */
interface LookStart {
  idleSince: number;
  activity: number;
  /** The look's start on the monotonic clock: each decision's audit row says how long it took (`lookMs`). */
  startedAt: number;
}

/**
 * What a look asks of the continuations sent (deliver/start-watch.ts answers; the composition root wires it): whether
 * one is being watched starting, and whether the last one never started (then recorded as failed, and true).
 */
export interface SentContinuations {
  has(sessionId: string): boolean;
  unstartedContinuation(sessionId: string, facts: HostFacts, armedHere: boolean): Promise<boolean>;
}

export interface LookParts {
  memories: SessionMemories;
  countdowns: Countdowns;
  judge: Judge;
  facts: FactGatherer;
  billing: Billing;
  /** Continuations queued or in flight in this process. */
  queue: DeliveryQueue;
  starts: SentContinuations;
  limitParks: LimitParks;
  verifications: Verifications;
}

export class Looks {
  /** Sessions being evaluated right now (a recheck leaves them to the evaluation in progress). */
  private readonly evaluating = new Set<string>();
  /** Parents held back by busy sub-sessions, and the sub-sessions they wait for. */
  private readonly waitingOn = new BoundedMap<string, Set<string>>(1000);
  /**
   * Idles not judged because the database failed (the look broke off, or the enforcer was paused when the idle came):
   * looked at again when it works again. An idle already written as owed (`recheck_at`) is also looked at by then.
   */
  private readonly unjudged = new BoundedMap<string, true>(5000);

  constructor(
    private readonly ctx: EngineContext,
    private readonly p: LookParts,
  ) {}

  /**
   * Looks at the session as if it had just gone idle. `owedSince`: when the look was owed (`recheck_at`), for an idle
   * seen before this look began.
   */
  evaluate(sessionId: string, trigger: Trigger, owedSince?: number): Promise<void> {
    return this.ctx.track(this.look(sessionId, trigger, owedSince)).then(() => undefined);
  }

  private async look(sessionId: string, trigger: Trigger, owedSince?: number): Promise<void> {
    const { ctx } = this;
    if (!ctx.lifecycle.deciding) {
      // Asked for while the database is paused (a catch-up after a takeover, a sub-session's end): owed until it works.
      if (this.pausedForStore()) this.unjudged.set(sessionId, true);
      return;
    }
    const owedAlready = trigger === "recheck" || trigger === "restart" || trigger === "resume";
    this.unjudged.set(sessionId, true);
    const idleSince = Math.min(ctx.clock.now(), owedSince ?? Infinity);
    const startedAt = ctx.clock.monotonic();
    // Whether a stage got to decide: one the database's pause kept from deciding leaves the idle owed.
    const decided = { precheck: false, judge: false };
    // A stop about to be told before OpenCode is read waits for the last continuation's bill (BILL_FIRST): its notice
    // says what the continuations cost, and that bill would otherwise land just after it. Asked once more, billed.
    let started;
    for (let mayBill = true; ; mayBill = false) {
      started = await ctx.lanes.run(sessionId, () =>
        this.precheck(sessionId, trigger, owedAlready, startedAt, decided, mayBill),
      );
      if (started !== BILL_FIRST) break;
      await this.p.billing.settle(sessionId);
    }
    if (!started) {
      if (decided.precheck || !this.pausedForStore()) this.unjudged.delete(sessionId);
      if (ctx.lifecycle.deciding) await this.p.billing.settle(sessionId);
      return;
    }
    this.evaluating.add(sessionId);
    try {
      const facts = await this.p.facts.gather(sessionId, inspectOptions(ctx.config, started.row));
      await ctx.lanes.run(sessionId, () =>
        this.judge(sessionId, trigger, facts, { ...started, idleSince, startedAt }, decided),
      );
      // Judged, or let go because the enforcer is stopping (its successor looks by `recheck_at`). Not on a throw.
      if (decided.judge || !this.pausedForStore()) this.unjudged.delete(sessionId);
    } finally {
      this.evaluating.delete(sessionId);
    }
  }

  private pausedForStore(): boolean {
    return this.ctx.lifecycle.mode === "paused_store";
  }

  /** An idle seen while the database is paused: looked at once it works again. */
  owe(sessionId: string): void {
    this.unjudged.set(sessionId, true);
  }

  /** The database works again: every idle it kept from being judged is looked at now. */
  lookAgainAtUnjudged(): void {
    const owed = [...this.unjudged.keys()];
    this.unjudged.clear();
    for (const sessionId of owed) void this.evaluate(sessionId, "reevaluate");
  }

  /**
   * The guards on what is known without OpenCode. Undefined when they said no (recorded); BILL_FIRST, when `mayBill`,
   * for a stop to tell after continuations: nothing recorded, the caller bills the last one and asks again.
   */
  private async precheck(
    sessionId: string,
    trigger: Trigger,
    owedAlready: boolean,
    startedAt: number,
    decided: { precheck: boolean },
    mayBill: boolean,
  ) {
    const { ctx } = this;
    if (!ctx.lifecycle.deciding) return undefined;
    decided.precheck = true;
    const memory = this.p.memories.get(sessionId);
    const { decision, row } = await this.p.judge.decide(sessionId, "idle");
    if (decision.verdict === "skip") {
      if (mayBill && (row?.continuations ?? 0) > 0 && isNews(row, decision.reason)) return BILL_FIRST;
      // Our own continuation is still being delivered (its answer looked up): this idle is looked at once it settles.
      if (decision.reason === "in_flight" && this.p.queue.isBusy(sessionId)) memory.idleWhileInjecting();
      const extra = { trigger, lookMs: this.tookMs(startedAt) };
      await this.p.judge.recordSkip(sessionId, decision, extra, owedAlready ? TAKE : undefined);
      return undefined;
    }
    // Durable from here: if this process dies while it reads OpenCode, the next one looks again.
    const now = ctx.clock.now();
    if (!owedAlready) await ctx.store.change(oweLook(ctx.scope(sessionId), now, { owe: now }));
    return { row, activity: memory.activity };
  }

  /** The guards on OpenCode's answers: arm, or record why not. */
  private async judge(
    sessionId: string,
    trigger: Trigger,
    facts: HostFacts,
    look: LookStart,
    decided: { judge: boolean },
  ): Promise<void> {
    const { ctx } = this;
    const { countdowns, judge, starts } = this.p;
    if (!ctx.lifecycle.deciding) return;
    decided.judge = true;
    const memory = this.p.memories.get(sessionId);
    if (memory.activity !== look.activity || memory.status === "busy") {
      const busy = { verdict: "skip", reason: "busy", detail: { stage: "idle", during: "fetch" } } as const;
      return judge.recordSkip(sessionId, busy, { trigger, lookMs: this.tookMs(look.startedAt) }, TAKE);
    }
    // A re-evaluation follows missed events: what OpenCode says now beats what this process last saw.
    if (trigger !== "idle" && facts.status) memory.sawStatus(facts.status);
    if (facts.parentId !== undefined) await this.noteParent(sessionId, facts.parentId);
    judge.rememberTodos(sessionId, facts);
    if (await starts.unstartedContinuation(sessionId, facts, countdowns.has(sessionId))) return;
    // A limit the messages keep and no park answered (its event never came here) is parked first: the guards then
    // find the session parked, as after the event.
    const failed = facts.messages;
    if (failed?.unansweredErrorKind === "limit" && failed.unansweredError)
      await this.p.limitParks.limitSeenInMessages(sessionId, failed.unansweredError, failed.unansweredErrorAt);
    const { decision, row } = await judge.decide(sessionId, "idle", facts, { idleSince: look.idleSince });
    const lookMs = this.tookMs(look.startedAt);
    if (decision.verdict === "skip") {
      if (decision.reason === "children_running" && facts.busyDescendants?.length) {
        this.waitingOn.set(sessionId, new Set(facts.busyDescendants));
        const owed = { owe: ctx.clock.now() + CHILDREN_RECHECK_MS, since: look.idleSince };
        return judge.recordSkip(sessionId, decision, { trigger, lookMs }, owed);
      }
      if (decision.reason === "todo_fetch_failed") {
        const retry = judge.retryTodoRead(sessionId, facts, look.idleSince);
        return judge.recordSkip(sessionId, decision, { trigger, lookMs, ...retry.detail }, retry.look);
      }
      return judge.recordSkip(sessionId, decision, { trigger, lookMs }, TAKE);
    }
    if (decision.verdict === "verify") return this.check(sessionId, row);
    const delayMs = Math.max(ctx.config.countdownSeconds * 1000, (decision.notBefore ?? 0) - ctx.clock.now());
    // The budget travels with the decision, so a reader of the audit (the TUI panel) can say "2 of 20".
    const detail: Record<string, unknown> = {
      trigger,
      lookMs,
      continuations: row?.continuations ?? 0,
      // What `allow` granted counts as budget: the panel says "21 of 25", not "21 of 20".
      maxContinuations: ctx.config.maxContinuations + (row?.allowedContinuations ?? 0),
    };
    if (ctx.config.maxContinuationCost > 0)
      detail.maxContinuationCost = ctx.config.maxContinuationCost + (row?.allowedCost ?? 0);
    if (decision.waitingFor) detail.waitingFor = decision.waitingFor;
    if (decision.pauseLifted) detail.pauseLifted = decision.pauseLifted;
    Object.assign(detail, progressDetail(decision, ctx.config.workWithoutProgressLimit));
    await countdowns.arm({
      sessionId,
      summary: decision.summary,
      attempt: decision.waitingFor === "backoff" ? (row?.consecutiveFailures ?? 0) : 0,
      delayMs,
      detail,
      sessionPatch: armPatch(decision, facts),
      look: TAKE,
      answeredSince: look.idleSince,
    });
  }

  /**
   * Every todo closed after continuations, and no check stands for the work as it is: the `verify` command runs (its
   * `verify_started` row is this look's record), and once it ended the session is looked at again: done, continued
   * with the failure, or stopped. Not awaited: the session's lane is not held while the command runs.
   */
  private check(sessionId: string, row: SessionRow | undefined): void {
    const ended = this.p.verifications.check(sessionId, row);
    void this.ctx.track(ended.then((wrote) => (wrote ? this.evaluate(sessionId, "checked") : undefined)));
  }

  /** Milliseconds since `startedAt` (monotonic), whole. */
  private tookMs(startedAt: number): number {
    return Math.round(this.ctx.clock.monotonic() - startedAt);
  }

  /** The session's parent, as an event or OpenCode said: remembered, and written once it changes. */
  async noteParent(sessionId: string, parentId: string | null): Promise<void> {
    const { ctx } = this;
    if (!this.p.memories.get(sessionId).sawParent(parentId) || parentId === null) return;
    if ((await ctx.store.read(session(sessionId)))?.parentId !== parentId)
      await ctx.store.change(changeSession(ctx.scope(sessionId), ctx.clock.now(), { parentId }));
  }

  /**
   * The sessions of this scope the enforcer owes a look (`sessions.recheck_at`: an idle not decided before a crash,
   * a continuation not seen starting, a resume from the CLI). Those of `owed` when the caller read them (a fleet
   * replica, for all its engines at once), else read now. One owed beyond the resume window expires only at a
   * process's own restart (`expireLate`: its person left it long ago); found at a fleet replica's takeover of a server
   * or at a lease tick, the lateness was the fleet's or this process's, and the look is made, as for a countdown taken
   * over too late to fire (countdowns.ts `recover`), or nobody would look at that idle again.
   */
  async recheckOwed(
    trigger: "restart" | "recheck",
    { owed, expireLate = false }: { owed?: readonly OwedLook[]; expireLate?: boolean } = {},
  ): Promise<void> {
    const { ctx } = this;
    const { countdowns, queue, starts } = this.p;
    const now = ctx.clock.now();
    const windowMs = ctx.config.resumeWindowSeconds * 1000;
    for (const { sessionId, recheckAt, owedSince } of owed ??
      (await ctx.store.read(sessionsToRecheck(ctx.followed, now)))) {
      if (
        this.evaluating.has(sessionId) ||
        starts.has(sessionId) ||
        countdowns.has(sessionId) ||
        queue.isBusy(sessionId)
      )
        continue;
      const lateMs = now - (recheckAt ?? now);
      if (!expireLate || lateMs < windowMs) {
        void this.evaluate(sessionId, trigger, owedSince ?? recheckAt ?? undefined);
        continue;
      }
      const expired = { recheck: true, lateMs, resumeWindowMs: windowMs };
      void ctx.lanes.post(sessionId, () => ctx.store.change(expireOwedLook(ctx.scope(sessionId), now, expired)));
    }
  }

  /** A sub-session went idle (or away): a parent that waited for its last busy descendant is looked at again. */
  descendantIdle(sessionId: string): void {
    if (this.waitingOn.size === 0) return;
    for (const [parent, busy] of [...this.waitingOn]) {
      if (!busy.delete(sessionId) || busy.size > 0) continue;
      this.waitingOn.delete(parent);
      void this.evaluate(parent, "children_done");
    }
  }

  forget(sessionId: string): void {
    this.waitingOn.delete(sessionId);
  }

  clear(): void {
    this.waitingOn.clear();
  }
}
