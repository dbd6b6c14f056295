// The countdown the user sees where no TUI plugin draws it: a toast every second during the last `countdownSeconds`
// before the deadline (a long wait for a backoff or a provider's retry-after stays quiet until then). It reads the
// deadline from the countdown itself, and stops within a second once the countdown ends, here or in another process
// (the TUI's key). While a TUI plugin draws this folder's countdowns (its heartbeat row), the toasts give way to it and
// come back when it goes: one countdown on screen, and both read the same deadline.
import { tuiWatching } from "../../store/reads.js";
import type { EngineContext } from "../context.js";
import { withTimeout } from "../host-calls.js";
import type { Countdowns } from "./countdowns.js";
import type { Armed } from "./held-countdowns.js";

const TICK_MS = 1000;
/**
 * How long a toast outlives its tick: OpenCode shows one toast at a time and the next one replaces it, so a toast that
 * lasts past the next tick never blinks out between two, and one that lasts only a little longer goes soon after a
 * cancel.
 */
const OVERLAP_MS = 600;

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
    if (seconds > 1) this.schedule(armed, Math.min(TICK_MS, remainingMs - (seconds - 1) * 1000));
    if (await ctx.store.read(tuiWatching(armed.row.directory, ctx.clock.now()))) return;
    void withTimeout("toast", ctx.config.hostTimeoutMs, () =>
      ctx.host.toast({
        title: "Todo continuation",
        message: countdownToastText(seconds, armed.summary?.open),
        variant: "warning",
        durationMs: Math.min(remainingMs, TICK_MS + OVERLAP_MS),
      }),
    ).catch(() => undefined);
  }
}

/**
 * "Resuming in 3s… (1 todo open)". With every todo closed, a countdown is armed only because the check of the
 * finished list failed: "(the check failed)".
 */
export function countdownToastText(seconds: number, open: number | undefined): string {
  const todos =
    open === undefined ? "" : open === 0 ? " (the check failed)" : ` (${open} todo${open === 1 ? "" : "s"} open)`;
  return `Resuming in ${seconds}s…${todos}`;
}
