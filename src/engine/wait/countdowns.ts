// The one owner of countdowns. Only this file arms, cancels, ends, adopts, recovers and claims a countdown, and it
// does each to the row, the in-memory index and the timer together, so that the rest of the engine asks it and never
// keeps a copy. An armed countdown lives once in memory (held-countdowns.ts), with the one deadline every waiter reads
// (`dueMono`, on the monotonic clock: a wall-clock jump cannot move it).
//
// Where a countdown changes state:
//   arm      idle evaluation, or a retry after a failed prompt            armed (superseding the session's previous one)
//   cancel   activity, a person, a session error or deletion             cancelled (reason: what happened)
//   end      the injector, when a guard says no before the prompt         cancelled (reason: the guard's skip)
//   claim    the injector, right before the prompt call                  fired (the exactly-once point)
//   recover  start, every lease tick, the store working again            adopted (re-armed, due at once) or expired
import { armedIn, countdown } from "../../store/reads.js";
import { classifyArmedCountdown } from "../../core/resume.js";
import type { CancelReason, ResumeReason } from "../../core/reasons.js";
import type { TodoSummary } from "../../core/todos.js";
import { adopt } from "../../store/batches/adopt-orphans.js";
import type { Orphan } from "../../store/changes/adopt.js";
import { releaseLeases } from "../../store/changes/release-leases.js";
import { renewLeases } from "../../store/changes/renew-leases.js";
import { arm } from "../../store/changes/arm.js";
import { claim } from "../../store/changes/claim.js";
import { end, type CountdownEnd } from "../../store/changes/end.js";
import { oweLook, type LookOwed } from "../../store/changes/look-owed.js";
import type { NewCountdown, NewInjection, SessionChange, SessionUpdate } from "../../store/port.js";
import type { CountdownRow } from "../../store/schema.js";
import type { Telling } from "../../store/changes/tell-stop.js";
import type { EngineContext } from "../context.js";
import { newId } from "../ids.js";
import { HeldCountdowns, type Armed, type Cancellation } from "./held-countdowns.js";

/** What is known of a countdown when it comes due. */
export interface DueInfo {
  /** How late it fires relative to its stored deadline (0 for one this process armed and waited for). */
  lateMs: number;
  resumed: ResumeReason | null;
}

/** Who is told of this process's countdowns (wired once by the composition root, parts.ts). */
export interface CountdownListener {
  /** A countdown was armed here and is waited for (the toasts show it). */
  armed(armed: Armed): void;
  /** A countdown reached its deadline (the injector takes it from here). */
  due(armed: Armed, info: DueInfo): void;
}

export interface ArmRequest {
  sessionId: string;
  summary?: TodoSummary;
  attempt: number;
  delayMs: number;
  /** What led to it, for the `armed` row. */
  detail: Record<string, unknown>;
  sessionPatch?: SessionUpdate;
  /** What arming does to the look owed (a look's arming is the look made). */
  look?: LookOwed;
  /** When the idle it answers was seen: a continuation fired since then (by any process) answered it already. */
  answeredSince?: number;
}

export interface RecoveryReport {
  rearmed: number;
  fired: number;
  expired: number;
  /** Armed countdowns left alone because a live owner holds them. */
  foreign: number;
}

const cancelled = (reason: CancelReason, detail: Record<string, unknown>): CountdownEnd => ({
  cancelled: reason,
  detail,
});

export class Countdowns {
  private readonly held = new HeldCountdowns();
  /**
   * This process's countdowns whose row is being written (armed, ended or claimed): in the database but not in
   * memory for one round trip, and not orphans. A lease tick that adopted one would resume a countdown nobody lost.
   */
  private readonly writing = new Set<string>();

  private listener: CountdownListener | undefined;

  constructor(private readonly ctx: EngineContext) {}

  /** Says who is told of armed and due countdowns; once, before anything is armed. */
  connect(listener: CountdownListener): void {
    if (this.listener) throw new Error("the countdowns are connected already");
    this.listener = listener;
  }

  private get told(): CountdownListener {
    if (!this.listener) throw new Error("a countdown is armed or due before anyone is told of it (connect)");
    return this.listener;
  }

  /** Sessions with a countdown here, armed or being armed (the hot path's first question: zero means nothing to do). */
  get size(): number {
    return this.held.size;
  }

  /** The hot-path question: does anything count down for this session here (armed, or being armed)? */
  has(sessionId: string): boolean {
    return this.held.has(sessionId);
  }

  get(sessionId: string): Armed | undefined {
    return this.held.armedFor(sessionId);
  }

  /** Whether `armed` is still the session's countdown in this process. */
  isCurrent(armed: Armed): boolean {
    return this.held.armedFor(armed.row.sessionId) === armed;
  }

  remainingMs(armed: Armed): number {
    return armed.dueMono - this.ctx.clock.monotonic();
  }

  // ── arm (called in the session's lane) ────────────────────────────────────

  /** Arms a countdown; undefined when a live process already counts down for the session, or activity ended it. */
  async arm(request: ArmRequest): Promise<Armed | undefined> {
    const { ctx } = this;
    const { sessionId } = request;
    const now = ctx.clock.now();
    const countdown: NewCountdown = {
      id: newId("cd"),
      sessionId,
      directory: ctx.followed.directory,
      server: ctx.followed.server ?? null,
      armedAt: now,
      deadlineAt: now + request.delayMs,
      owner: ctx.owner,
      leaseUntil: now + ctx.config.leaseMs,
      attempt: request.attempt,
      todosOpen: request.summary?.open ?? null,
      todosTotal: request.summary?.total ?? null,
    };
    this.held.startArming(sessionId);
    this.writing.add(countdown.id);
    let armed: Armed | undefined;
    let cancelledMeanwhile: Cancellation | null | undefined;
    try {
      const { sessionPatch, look, answeredSince } = request;
      const written = await ctx.store.change(arm(countdown, request.detail, { sessionPatch, look, answeredSince }));
      cancelledMeanwhile = this.held.cancelledWhileArming(sessionId);
      const row: CountdownRow = {
        ...countdown,
        server: countdown.server ?? null,
        state: "armed",
        endedAt: null,
        endReason: null,
      };
      // Held before anything else runs: a lease tick reading the new row meanwhile would take it for an orphan. Not
      // held if the store paused meanwhile: the pause dropped every countdown held here, and the row, this process's
      // and in no one's memory, is adopted with the others when the store works again.
      const wait = { summary: request.summary, delayMs: request.delayMs, resumed: null };
      if (written.armed && ctx.lifecycle.deciding) armed = this.hold(row, wait);
    } finally {
      this.held.endArming(sessionId);
      this.writing.delete(countdown.id);
    }
    if (!armed) return undefined;
    if (cancelledMeanwhile) {
      await this.end(armed, cancelled(cancelledMeanwhile.reason, cancelledMeanwhile.detail));
      return undefined;
    }
    this.told.armed(armed);
    return armed;
  }

  // ── cancel (called at the event, outside any lane) ─────────────────────────

  /**
   * Activity ends the session's countdown: it leaves memory at once (so the next streamed part finds nothing to do)
   * and its row is ended in the session's lane, with `change` applied to the session in the same transaction. With
   * no countdown here, `change` is still written. Resolves with whether a countdown was ended.
   */
  cancel(
    sessionId: string,
    reason: CancelReason,
    detail: Record<string, unknown>,
    change?: SessionChange,
    look?: LookOwed,
  ) {
    const { ctx } = this;
    const now = ctx.clock.now();
    // An arming being written is ended as soon as it is (see `arm`).
    this.held.cancelArming(sessionId, { reason, detail });
    const armed = this.detach(sessionId);
    if (!armed)
      return change || look
        ? ctx.changeSession(sessionId, change ?? {}, look).then(() => false)
        : Promise.resolve(false);
    // Out of memory now, but armed in the database until the lane gets to it.
    const ending = cancelled(reason, detail);
    return this.whileWriting(armed.row.id, () =>
      ctx.lanes.post(sessionId, () => ctx.store.change(end(armed.row, ending, now, change, look))),
    ).then((ended) => ended === true);
  }

  // ── end, claim (called in the session's lane by the injector) ──────────────

  /**
   * Ends `armed` (a guard's skip at its deadline, or activity during arming); false if it had ended already. A skip's
   * `tell` is the stop it may tell (store/changes/tell-stop.ts).
   */
  async end(armed: Armed, how: CountdownEnd, change?: SessionChange, tell?: Telling): Promise<boolean> {
    if (this.isCurrent(armed)) this.detach(armed.row.sessionId);
    return this.whileWriting(armed.row.id, () =>
      this.ctx.store.change(end(armed.row, how, this.ctx.clock.now(), change, undefined, tell)),
    );
  }

  /**
   * Takes `armed` for its prompt call: it leaves memory, and its row goes from armed to fired with the injection
   * recorded `pending`. False when it is no longer this process's to send (cancelled meanwhile, or taken over).
   */
  async claim(armed: Armed, injection: NewInjection, detail: Record<string, unknown>): Promise<boolean> {
    if (!this.isCurrent(armed)) return false;
    this.detach(armed.row.sessionId);
    return this.whileWriting(armed.row.id, () => this.ctx.store.change(claim(injection, detail)));
  }

  private async whileWriting<T>(countdownId: string, write: () => Promise<T>): Promise<T> {
    this.writing.add(countdownId);
    try {
      return await write();
    } finally {
      this.writing.delete(countdownId);
    }
  }

  /**
   * Whether `armed` is still armed in the database and still this process's; one ended elsewhere (the TUI's key, the
   * CLI) or taken over by another process (this one stalled past its lease) is let go.
   */
  async stillArmed(armed: Armed): Promise<boolean> {
    const row = await this.ctx.store.read(countdown(armed.row.id));
    return this.armedAsRead(armed, row?.state === "armed" ? row : undefined);
  }

  /**
   * `stillArmed` judged from the session's armed countdown as the caller just read it (`sessionState`'s `armed`): the
   * same answer, and one that is no longer so is let go the same way.
   */
  armedAsRead(armed: Armed, found: Pick<CountdownRow, "id" | "owner"> | undefined): boolean {
    if (found?.id === armed.row.id && found.owner === this.ctx.owner) return true;
    if (this.isCurrent(armed)) this.detach(armed.row.sessionId);
    return false;
  }

  /** A countdown ended by a state change elsewhere (a stop): out of memory, if it is the one held here. */
  letGo(sessionId: string, countdownId: string): void {
    if (this.held.armedFor(sessionId)?.row.id === countdownId) this.detach(sessionId);
  }

  // ── recover (start, lease ticks, the store working again) ──────────────────

  /**
   * Picks up the armed countdowns of this scope that no live process holds, applying the misfire policy: those of
   * `armed` when the caller read them (a fleet replica, for all its engines at once), else read now.
   */
  async recover(reason: ResumeReason, armed?: readonly CountdownRow[]): Promise<RecoveryReport> {
    const { ctx } = this;
    const report: RecoveryReport = { rearmed: 0, fired: 0, expired: 0, foreign: 0 };
    const now = ctx.clock.now();
    const resumeWindowMs = ctx.config.resumeWindowSeconds * 1000;
    const orphans: Orphan[] = [];
    for (const countdown of armed ?? (await ctx.store.read(armedIn(ctx.followed)))) {
      if (this.held.armedFor(countdown.sessionId)?.row.id === countdown.id || this.writing.has(countdown.id)) continue;
      const orphaned =
        countdown.owner === null ||
        countdown.owner === ctx.owner ||
        !ctx.store.ownerAlive(countdown.owner, countdown.leaseUntil, now);
      if (!orphaned) {
        report.foreign++;
        continue;
      }
      orphans.push({ countdown, verdict: classifyArmedCountdown(countdown, now, resumeWindowMs) });
    }
    if (orphans.length === 0) return report;
    const leaseUntil = now + ctx.config.leaseMs;
    const taken = await adopt(ctx.store, orphans, { reason, owner: ctx.owner, leaseUntil, now, resumeWindowMs });
    // The store paused meanwhile: the rows stay this process's and are adopted again when it works again.
    if (!ctx.lifecycle.deciding) return report;
    for (const [i, { countdown, verdict }] of orphans.entries()) {
      if (!taken[i]) continue;
      if (verdict.action === "expire") {
        report.expired++;
        // Too late to fire. After a restart that is the end of it; taken from a replica that died or starved, or back
        // from a database outage, the lateness was the fleet's, and nobody would look at the idle it was armed for
        // again: its session is owed a fresh look (a new countdown, every guard again).
        if (reason !== "restart") {
          const look = { owe: now, since: countdown.armedAt };
          void ctx.lanes.post(countdown.sessionId, () =>
            ctx.store.change(oweLook(ctx.scope(countdown.sessionId), now, look)),
          );
        }
        continue;
      }
      const row: CountdownRow = { ...countdown, owner: ctx.owner, leaseUntil };
      const summary =
        row.todosOpen != null && row.todosTotal != null
          ? { open: row.todosOpen, total: row.todosTotal, completed: 0 }
          : undefined;
      // Overdue: due on the next tick of the timer, after the adoption is committed (firing reads and writes the same
      // rows) and without holding up whoever awaits the recovery.
      const delayMs = verdict.action === "rearm" ? verdict.remainingMs : 0;
      const wait = { summary, delayMs, resumed: reason };
      // A newer countdown held here wins, unless its row was ended elsewhere meanwhile: then the adopted row is the
      // session's armed one, and leaving it unheld would have it adopted again on every tick.
      const newer = this.held.armedFor(row.sessionId);
      if (!this.hold(row, wait) && !(newer && (await this.stillArmed(newer)))) this.hold(row, wait);
      if (verdict.action === "rearm") report.rearmed++;
      else report.fired++;
    }
    return report;
  }

  renewLeases(): Promise<number> {
    return this.ctx.store.change(renewLeases(this.ctx.owner, this.ctx.clock.now() + this.ctx.config.leaseMs));
  }

  /** Forgets every countdown in memory; the rows stay this process's and are adopted again (the store paused). */
  dropAll(): void {
    for (const sessionId of this.held.sessions()) this.detach(sessionId);
    this.held.dropArmings();
  }

  /** Forgets every countdown and hands the rows back, so that a successor adopts them at once. */
  async release(): Promise<void> {
    this.dropAll();
    await this.ctx.store.change(releaseLeases(this.ctx.owner, this.ctx.followed));
  }

  // ── memory and timer ──────────────────────────────────────────────────────

  /** Holds `row` and waits for it; a newer countdown of the session already held here wins (undefined). */
  private hold(
    row: CountdownRow,
    wait: { summary?: TodoSummary; delayMs: number; resumed: ResumeReason | null },
  ): Armed | undefined {
    const current = this.held.armedFor(row.sessionId);
    if (current && current.row.id !== row.id) {
      if (current.row.armedAt > row.armedAt) return undefined;
      this.detach(row.sessionId);
    }
    // The wait never exceeds the countdown's own duration (a wall clock that jumped back).
    const durationMs = Math.max(0, row.deadlineAt - row.armedAt);
    const delayMs = Math.min(Math.max(0, wait.delayMs), durationMs);
    const armed: Armed = {
      row,
      summary: wait.summary,
      dueMono: this.ctx.clock.monotonic() + delayMs,
      resumed: wait.resumed,
    };
    this.held.hold(armed);
    this.ctx.timers.schedule(`countdown:${row.id}`, delayMs, () => this.due(armed));
    return armed;
  }

  private detach(sessionId: string): Armed | undefined {
    const armed = this.held.release(sessionId);
    if (!armed) return undefined;
    this.ctx.timers.cancel(`countdown:${armed.row.id}`);
    return armed;
  }

  private due(armed: Armed): void {
    if (!this.isCurrent(armed)) return;
    // How late the timer (or, for a countdown resumed after a restart, the restart) made it: the `fired` row says so.
    const lateMs = Math.max(0, this.ctx.clock.now() - armed.row.deadlineAt);
    this.told.due(armed, { lateMs, resumed: armed.resumed });
  }
}
