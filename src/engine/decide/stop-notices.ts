// Continuation ended until someone acts: the user is told once, with the reason and what to do (a toast from the
// server side, so it shows without the TUI plugin too). Durable (`sessions.notified_stop`): a restart does not tell
// it again, and a continuation that goes out clears it, so that the next stop is news.
import { sessionRow } from "../../store/reads.js";
import type { Explanation } from "../../core/explain.js";
import { changeSession } from "../../store/changes/change-session.js";
import type { EngineContext } from "../context.js";
import { withTimeout } from "../host-calls.js";

/** How long the toast that says why continuation stopped stays up. */
const STOP_TOAST_MS = 8000;

const sentence = (text: string) => `${text[0]!.toUpperCase()}${text.slice(1)}.`;

export class StopNotices {
  constructor(private readonly ctx: EngineContext) {}

  /** Tells the user why continuation stopped, unless they were already told this reason. Runs in the session's lane. */
  async tell(sessionId: string, reason: string, explanation: Explanation | undefined): Promise<void> {
    const { ctx } = this;
    if (!explanation || (await ctx.store.read(sessionRow(sessionId)))?.notifiedStop === reason) return;
    await ctx.store.change(changeSession(ctx.scope(sessionId), ctx.clock.now(), { notifiedStop: reason }));
    ctx.log("info", `continuation ended: ${explanation.text}`, { sessionId, reason });
    if (!ctx.config.toast) return;
    // The hint on a line of its own: a command never breaks across two (the toast wraps at hyphens too).
    const message = `${sentence(explanation.text)}${explanation.hint ? `\n${sentence(explanation.hint)}` : ""}`;
    void withTimeout("toast", ctx.config.hostTimeoutMs, () =>
      ctx.host.toast({ title: "Todo continuation", message, variant: "warning", durationMs: STOP_TOAST_MS }),
    ).catch(() => undefined);
  }
}
