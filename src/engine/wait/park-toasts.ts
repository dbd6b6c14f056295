// The toast that says a session was parked, and why and until when: a wait of hours must not look like the enforcer
// having given up. One toast per park, where OpenCode shows toasts (the TUI shows the park on its own line as well).
import type { ParkReason } from "../../core/reasons.js";
import { duration } from "../../core/words.js";
import type { EngineContext } from "../context.js";
import { withTimeout } from "../host-calls.js";

/** Long enough to be read; a park is news once, not a countdown. */
const TOAST_MS = 8000;

const WHY: { readonly [R in ParkReason]: string } = {
  limit: "the provider's limit lifts then",
  opencode_retry: "OpenCode retries then",
  agent: "as the agent asked",
};

/** "Parked until 15:04 (in 2 h 13 min): the provider's limit lifts then." */
export function parkToastText(reason: ParkReason, until: number, now: number): string {
  const clock = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" }).format(until);
  return `Parked until ${clock} (in ${duration(until - now)}): ${WHY[reason]}.`;
}

export class ParkToasts {
  constructor(private readonly ctx: EngineContext) {}

  parked(park: { sessionId: string; reason: ParkReason; until: number }): void {
    const { ctx } = this;
    if (!ctx.config.toast) return;
    void withTimeout("toast", ctx.config.hostTimeoutMs, () =>
      ctx.host.toast({
        title: "Todo continuation",
        message: parkToastText(park.reason, park.until, ctx.clock.now()),
        variant: "info",
        durationMs: TOAST_MS,
      }),
    ).catch(() => undefined);
  }
}
