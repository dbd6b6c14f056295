// After a continuation is sent, its turn must start within `startTimeoutMs`: any sign of the turn running confirms it
// (the failures in a row are over); otherwise OpenCode is asked, and a turn that never started is a failed attempt
// (`injection_failed: not_started`), which the injector records and retries.
import { afterStartConfirmed } from "../core/transitions.js";
import { changeSession } from "../store/changes/change-session.js";
import type { EngineContext } from "./context.js";
import type { FactGatherer } from "./facts.js";
import { BoundedMap } from "./session-memory.js";

interface Watch {
  injectionId: string;
  messageId: string;
  sentMono: number;
}

export class StartWatch {
  private readonly watching = new BoundedMap<string, Watch>(1000);

  constructor(
    private readonly ctx: EngineContext,
    private readonly facts: FactGatherer,
    private readonly notStarted: (sessionId: string, injectionId: string, waitedMs: number) => Promise<void>,
  ) {}

  has(sessionId: string): boolean {
    return this.watching.has(sessionId);
  }

  /** `signalsAtCall`: the session's turn signals when the call began; one since then already confirms the start. */
  watch(sessionId: string, injectionId: string, messageId: string, signalsAtCall: number): void {
    const { ctx } = this;
    const watch = { injectionId, messageId, sentMono: ctx.clock.monotonic() };
    this.watching.set(sessionId, watch);
    if (ctx.memories.get(sessionId).turnSignals !== signalsAtCall) return this.confirm(sessionId);
    ctx.timers.schedule(
      `start:${sessionId}`,
      ctx.config.startTimeoutMs,
      () => void ctx.track(this.check(sessionId, watch)),
    );
  }

  /** A sign of the turn running (busy, output, a tool): the start is confirmed. */
  confirm(sessionId: string): void {
    if (this.watching.size === 0 || !this.drop(sessionId)) return;
    void this.ctx.changeSession(sessionId, { ...afterStartConfirmed(), recheckAt: null });
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

  private async check(sessionId: string, watch: Watch): Promise<void> {
    const { ctx } = this;
    if (this.watching.get(sessionId) !== watch || !ctx.lifecycle.deciding) return;
    // Events can be missed (a reconnecting service): ask OpenCode before calling it a failure.
    const started = await this.facts.turnStarted(sessionId, watch.messageId);
    await ctx.lanes.run(sessionId, async () => {
      if (this.watching.get(sessionId) !== watch) return;
      this.watching.delete(sessionId);
      if (started !== false) {
        const started = { ...afterStartConfirmed(), recheckAt: null };
        await ctx.store.change(changeSession(ctx.scope(sessionId), ctx.clock.now(), started));
        return;
      }
      await this.notStarted(sessionId, watch.injectionId, ctx.clock.monotonic() - watch.sentMono);
    });
  }
}
