// Continuation ended until someone acts, or the session needs its person: they are told once. The skip that decides the
// stop writes what it tells in its own transaction (store/changes/tell-stop.ts: the reason remembered in
// `sessions.notified_stop`, and a notice per channel in the outbox); here the teller hands it what to write, and once
// it is written shows the toast (from the server side, so it shows without the TUI plugin too) and wakes the sender.
import { explain } from "../../core/explain.js";
import { STOP_NOTICES } from "../../core/skip-reasons.js";
import type { NoticeKind } from "../../core/reasons.js";
import type { TodoSummary } from "../../core/todos.js";
import { tellStopChange, type Telling, type Told } from "../../store/changes/tell-stop.js";
import type { EngineContext } from "../context.js";
import { withTimeout } from "../host-calls.js";
import { newId } from "../ids.js";

/** How long the toast that says why continuation stopped stays up. */
const STOP_TOAST_MS = 8000;

const sentence = (text: string) => `${text[0]!.toUpperCase()}${text.slice(1)}.`;

/** Where notices go: each channel's name and the kinds it takes (the adapters parse them from `notify`). */
export interface NoticeRoutes {
  readonly channels: ReadonlyArray<{ name: string; kinds: readonly NoticeKind[] }>;
  /** Notices were written to the outbox: the sender looks now rather than at its next poll. */
  written(): void;
}

export const NO_ROUTES: NoticeRoutes = { channels: [], written: () => undefined };

export class StopNotices {
  constructor(
    private readonly ctx: EngineContext,
    private readonly routes: NoticeRoutes = NO_ROUTES,
  ) {}

  /** What a change that may decide a stop writes if it does (see tell-stop.ts). */
  telling(todos?: TodoSummary): Telling {
    return { noticeId: newId("ntc"), channels: this.routes.channels, todos };
  }

  /** A stop's change committed: the toast and the log line if it was news, and the sender woken if it wrote notices. */
  told(sessionId: string, reason: string, detail: Record<string, unknown>, told: Told): void {
    const { ctx } = this;
    if (told.notices > 0) this.routes.written();
    // A done that a check decided is told too: the person saw "checking" and is owed its result.
    const checkedDone = reason === "todos_complete" && detail.verified !== undefined;
    if (!told.news || !(STOP_NOTICES.has(reason) || checkedDone)) return;
    const explanation = explain("skipped", reason, detail);
    if (!explanation) return;
    ctx.log("info", `continuation ended: ${explanation.text}`, { sessionId, reason });
    if (!ctx.config.toast) return;
    // The hint on a line of its own: a command never breaks across two (the toast wraps at hyphens too).
    const message = `${sentence(explanation.text)}${explanation.hint ? `\n${sentence(explanation.hint)}` : ""}`;
    const variant = checkedDone ? "success" : "warning";
    void withTimeout("toast", ctx.config.hostTimeoutMs, () =>
      ctx.host.toast({ title: "Todo continuation", message, variant, durationMs: STOP_TOAST_MS }),
    ).catch(() => undefined);
  }

  /** A countdown's end by a guard's skip carried a telling (see `telling`): it may have written notices. */
  mayHaveTold(): void {
    if (this.routes.channels.length > 0) this.routes.written();
  }

  /** Tells a stop that no skip decides (continuations given up), in its own transaction. Runs in the session's lane. */
  async tell(sessionId: string, reason: string, detail: Record<string, unknown>, todos?: TodoSummary): Promise<void> {
    const { ctx } = this;
    const told = await ctx.store.change(
      tellStopChange(ctx.scope(sessionId), reason, detail, this.telling(todos), ctx.clock.now()),
    );
    this.told(sessionId, reason, detail, told);
  }
}
