// Every third of a lease: say this process is alive (the heartbeat), renew its countdowns' leases, adopt what nobody
// holds any more, settle continuations left pending by a process that died, and take the looks owed to sessions. The
// heartbeat and the renewal are the owner's, once for all its countdowns: an engine whose owner id belongs to its caller
// (a fleet replica's engines, one per server, share one) leaves both to that caller, which does them once a round. Such
// an engine has no timer either: its caller reads the rows of all its engines' scopes at once, three statements
// whatever their number, and hands each engine its own (`tickOn`), so that a replica's idle load does not grow with the
// servers it follows.
import { TAKEOVER_REASON } from "../core/reasons.js";
import type { LeaseRows } from "../store/reads.js";
import type { EngineContext } from "./context.js";
import type { Looks } from "./decide/looks.js";
import type { Reconciler } from "./deliver/reconciler.js";
import type { Countdowns } from "./wait/countdowns.js";

export interface LeaseParts {
  countdowns: Countdowns;
  reconciler: Reconciler;
  looks: Looks;
}

/**
 * idle ──start()──▶ ticking ──stop()──▶ stopped. Ticking: on its timer, or (its owner its caller's) when the caller
 * hands it rows; never before start() (the engine's own recovery comes first) nor after stop().
 */
type LoopMode = "idle" | "ticking" | "stopped";

export class LeaseLoop {
  private mode: LoopMode = "idle";
  private timer: ReturnType<typeof setInterval> | undefined;
  /** A tick still running when the next is due is not doubled. */
  private running = false;
  /** The heartbeat being written, if one is: a slow one is not doubled either. */
  private beating: Promise<void> | undefined;

  constructor(
    private readonly ctx: EngineContext,
    private readonly p: LeaseParts,
    /** False: the caller keeps the owner alive, renews its leases and drives the ticks (see above). */
    private readonly keepsOwner = true,
  ) {}

  /** Starts ticking; nothing once the engine is ending (a dispose that came while the engine was starting). */
  start(): void {
    if (this.ctx.lifecycle.ending || this.mode !== "idle") return;
    this.mode = "ticking";
    if (!this.keepsOwner) return;
    const period = Math.max(100, Math.floor(this.ctx.config.leaseMs / 3));
    this.timer = setInterval(() => void this.ctx.track(this.tick()), period);
    this.timer.unref?.();
  }

  stop(): void {
    this.mode = "stopped";
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * One tick on the rows of this engine's scope that its caller read: what a tick reads itself, otherwise. Nothing
   * before start() or after stop(), nor while a tick still runs.
   */
  tickOn(rows: LeaseRows): Promise<void> {
    if (this.mode !== "ticking") return Promise.resolve();
    return this.ctx.track(this.tick(rows)).then(() => undefined);
  }

  /** Says this owner is alive for another lease (a slow heartbeat is joined, not doubled); its caller's to say if not. */
  heartbeat(): Promise<void> {
    if (!this.keepsOwner) return Promise.resolve();
    this.beating ??= this.ctx.store
      .heartbeat(this.ctx.owner, this.ctx.config.leaseMs)
      .finally(() => (this.beating = undefined));
    return this.beating;
  }

  private async tick(rows?: LeaseRows): Promise<void> {
    if (!this.ctx.lifecycle.deciding) return;
    // The heartbeat goes out every tick, on its own: the rest of a tick can wait long for a busy pool (PostgreSQL
    // under a burst of idles), and a heartbeat held up behind it past the lease let the others take this process's
    // countdowns while it was alive and well.
    const beat = this.heartbeat();
    if (this.running) return void this.ctx.track(beat);
    this.running = true;
    try {
      await beat;
      if (this.keepsOwner) await this.p.countdowns.renewLeases();
      await this.p.countdowns.recover(TAKEOVER_REASON, rows?.armed);
      void this.ctx.track(this.p.reconciler.reconcilePending(rows?.pending));
      await this.p.looks.recheckOwed("recheck", rows?.owed);
    } finally {
      this.running = false;
    }
  }
}
