// The countdown the user sees: a toast every second during the last `countdownSeconds` before the deadline (a long
// wait for a backoff or a provider's retry-after stays quiet until then). It reads the deadline from the countdown
// itself, and stops within a second once the countdown ends, here or in another process (the TUI's key).
import type { EngineContext } from "../context.js";
import { withTimeout } from "../host-calls.js";
import type { Armed, Countdowns } from "./countdowns.js";

const TICK_MS = 1000;

export class CountdownToasts {
  constructor(
    private readonly ctx: EngineContext,
    private readonly countdowns: Countdowns,
  ) {}

  show(armed: Armed): void {
    const { ctx } = this;
    if (!ctx.config.toast) return;
    const windowMs = Math.max(1000, ctx.config.countdownSeconds * 1000);
    const quietMs = this.countdowns.remainingMs(armed) - windowMs;
    if (quietMs > 0) this.schedule(armed, quietMs);
    else void ctx.track(this.tick(armed));
  }

  private schedule(armed: Armed, delayMs: number): void {
    this.ctx.timers.schedule(`toast:${armed.row.id}`, delayMs, () => void this.ctx.track(this.tick(armed)));
  }

  private async tick(armed: Armed): Promise<void> {
    const { ctx, countdowns } = this;
    if (!countdowns.isCurrent(armed) || countdowns.remainingMs(armed) <= 0) return;
    // Cancelled with the TUI's key (another process): the countdown stops showing within a second.
    if (!(await countdowns.stillArmed(armed))) return;
    const remainingMs = countdowns.remainingMs(armed);
    if (remainingMs <= 0) return;
    const seconds = Math.max(1, Math.ceil(remainingMs / 1000));
    const open = armed.summary ? ` (${armed.summary.open} todos open)` : "";
    void withTimeout("toast", ctx.config.hostTimeoutMs, () =>
      ctx.host.toast({
        title: "Todo continuation",
        message: `Resuming in ${seconds}s…${open}`,
        variant: "warning",
        durationMs: 950,
      }),
    ).catch(() => undefined);
    if (seconds > 1) this.schedule(armed, Math.min(TICK_MS, remainingMs - (seconds - 1) * 1000));
  }
}
