// After a continuation is sent, its turn must start within `startTimeoutMs`: any sign of the turn running confirms it
// (the failures in a row are over); otherwise OpenCode is asked, and a turn that never started is a failed attempt
// (`injection_failed: not_started`), recorded and retried like any other. A look after a restart or a missed event
// finds the same thing from the session's messages (`unstartedContinuation`).
import { injection } from "../../store/reads.js";
import type { HostFacts } from "../../core/decision-input.js";
import { afterStartConfirmed } from "../../core/transitions.js";
import { changeSession } from "../../store/changes/change-session.js";
import { TAKE } from "../../store/changes/look-owed.js";
import { BoundedMap } from "../bounded-map.js";
import type { EngineContext } from "../context.js";
import type { FactGatherer } from "../read/facts.js";
import type { Outcomes } from "./outcomes.js";

interface Watch {
  injectionId: string;
  messageId: string;
  sentMono: number;
}

/** A start confirmed: the failures in a row are over, and the look owed to check the start is made. */
const STARTED = afterStartConfirmed();

export class StartWatch {
  private readonly watching = new BoundedMap<string, Watch>(1000);

  constructor(
    private readonly ctx: EngineContext,
    private readonly facts: FactGatherer,
    private readonly outcomes: Outcomes,
  ) {}

  has(sessionId: string): boolean {
    return this.watching.has(sessionId);
  }

  /** `startedMeanwhile`: a sign of the turn running came while the call was made (OpenCode may go busy before it returns). */
  watch(sessionId: string, injectionId: string, messageId: string, startedMeanwhile: boolean): void {
    const { ctx } = this;
    const watch = { injectionId, messageId, sentMono: ctx.clock.monotonic() };
    this.watching.set(sessionId, watch);
    if (startedMeanwhile) return this.confirm(sessionId);
    ctx.timers.schedule(
      `start:${sessionId}`,
      ctx.config.startTimeoutMs,
      () => void ctx.track(this.check(sessionId, watch)),
    );
  }

  /** A sign of the turn running (busy, output, a tool): the start is confirmed. */
  confirm(sessionId: string): void {
    if (this.watching.size === 0 || !this.drop(sessionId)) return;
    void this.ctx.changeSession(sessionId, STARTED, TAKE);
  }

  /** Stops watching (the user stepped in, the session is gone); true if it was watched. */
  drop(sessionId: string): boolean {
    if (!this.watching.delete(sessionId)) return false;
    this.ctx.timers.cancel(`start:${sessionId}`);
    return true;
  }

  clear(): void {
    for (const sessionId of [...this.watching.keys()]) this.drop(sessionId);
  }

  /**
   * The last continuation sent is the session's last message, nothing answered it, and the session is idle well
   * after it went out: OpenCode accepted it and never started the turn (seen on a look after a restart or a missed
   * event). Records the failure and returns true. Runs in the session's lane.
   */
  async unstartedContinuation(sessionId: string, facts: HostFacts, armedHere: boolean): Promise<boolean> {
    const { ctx } = this;
    if (facts.messages?.replyToLastInjection !== "none" || facts.status !== "idle" || armedHere) return false;
    const last = await this.lastSent(sessionId, facts);
    const now = ctx.clock.now();
    if (!last || this.outcomes.countedNotStarted(last.id) || now - last.createdAt < ctx.config.startTimeoutMs)
      return false;
    this.drop(sessionId);
    await this.outcomes.notStarted(sessionId, last.id, now - last.createdAt);
    return true;
  }

  private async lastSent(sessionId: string, facts: HostFacts): Promise<{ id: string; createdAt: number } | undefined> {
    const messageId = facts.messages?.ownMessageIds.at(-1);
    const injectionId = facts.messages?.ownInjectionIds.at(-1);
    const row = injectionId ? await this.ctx.store.read(injection(injectionId)) : undefined;
    if (
      !row ||
      row.sessionId !== sessionId ||
      row.status !== "sent" ||
      (messageId && row.messageId && row.messageId !== messageId)
    )
      return undefined;
    return { id: row.id, createdAt: row.createdAt };
  }

  private async check(sessionId: string, watch: Watch): Promise<void> {
    const { ctx } = this;
    if (this.watching.get(sessionId) !== watch || !ctx.lifecycle.deciding) return;
    // Events can be missed (a reconnecting service): ask OpenCode before calling it a failure.
    const started = await this.facts.turnStarted(sessionId, watch.messageId);
    await ctx.lanes.run(sessionId, async () => {
      if (this.watching.get(sessionId) !== watch) return;
      this.watching.delete(sessionId);
      if (started !== false) {
        await ctx.store.change(changeSession(ctx.scope(sessionId), ctx.clock.now(), STARTED, TAKE));
        return;
      }
      await this.outcomes.notStarted(sessionId, watch.injectionId, ctx.clock.monotonic() - watch.sentMono);
    });
  }
}
