// Every third of a lease: say this process is alive (the heartbeat), renew its countdowns' leases, adopt what nobody
// holds any more, settle continuations left pending by a process that died, wake the parks whose time came, start the
// parks' checks that are due, keep this process's runs of the `verify` command (interrupting those of a dead one), and
// take the looks owed to sessions. The heartbeat and the renewal are the owner's, once for all its countdowns: an
// engine whose owner id belongs to its caller (a fleet replica's engines, one per server, share one) leaves both to
// that caller, which does them once a round. Such an engine has no timer either: its caller reads the rows of all its
// engines' scopes at once, four statements whatever their number, and hands each engine its own (`tickOn`), so that a
// replica's idle load does not grow with the servers it follows.
import { TAKEOVER_REASON } from "../core/reasons.js";
import type { LeaseRows } from "../store/reads.js";
import type { EngineContext } from "./context.js";
import { loopModes } from "./modes.js";
import type { Looks } from "./decide/looks.js";
import type { Reconciler } from "./deliver/reconciler.js";
import type { Countdowns } from "./wait/countdowns.js";
import type { ParkChecks } from "./wait/park-checks.js";
import type { ParkWakes } from "./wait/park-wakes.js";
import type { Verifications } from "./wait/verifications.js";

export interface LeaseParts {
  countdowns: Countdowns;
  reconciler: Reconciler;
  looks: Looks;
  parkWakes: ParkWakes;
  parkChecks: ParkChecks;
  verifications: Verifications;
}

/**
 * Running (modes.ts, a loop's modes): on its timer, or (its owner its caller's) when the caller hands it rows; never
 * before start() (the engine's own recovery comes first) nor once stop() was asked.
 */
export class LeaseLoop {
  private readonly modes = loopModes("the lease loop");
  private timer: ReturnType<typeof setInterval> | undefined;
  /** The tick running now, if one is: a tick due meanwhile is not doubled, and a stop waits for it. */
  private ticking: Promise<void> | undefined;
  /** The heartbeat being written, if one is: a slow one is not doubled, and a stop waits for it. */
  private beating: Promise<void> | undefined;

  constructor(
    private readonly ctx: EngineContext,
    private readonly p: LeaseParts,
    /** False: the caller keeps the owner alive, renews its leases and drives the ticks (see above). */
    private readonly keepsOwner = true,
  ) {}

  start(): Promise<void> {
    return this.modes.start(async () => {
      if (!this.keepsOwner) return;
      const period = Math.max(100, Math.floor(this.ctx.config.leaseMs / 3));
      this.timer = setInterval(() => void this.ctx.track(this.tick()), period);
      this.timer.unref?.();
    });
  }

  /**
   * No more ticks; resolves once the tick and the heartbeat in flight are over (one landing after the owner's
   * retirement would say it alive again for a lease). Called by the engine's root.
   */
  stop(): Promise<void> {
    return this.modes.stop(async () => {
      clearInterval(this.timer);
      // Their failures, if they fail, are the background job's to report.
      await Promise.allSettled([this.ticking, this.beating]);
    });
  }

  /**
   * One tick on the rows of this engine's scope that its caller read: what a tick reads itself, otherwise. Nothing
   * before start() or after stop(), nor while a tick still runs.
   */
  tickOn(rows: LeaseRows): Promise<void> {
    if (!this.modes.is("running")) return Promise.resolve();
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

  private tick(rows?: LeaseRows): Promise<void> {
    if (!this.ctx.lifecycle.deciding) return Promise.resolve();
    // The heartbeat goes out every tick, on its own: the rest of a tick can wait long for a busy pool (PostgreSQL
    // under a burst of idles), and a heartbeat held up behind it past the lease let the others take this process's
    // countdowns while it was alive and well.
    const beat = this.heartbeat();
    if (this.ticking) {
      void this.ctx.track(beat);
      return Promise.resolve();
    }
    this.ticking = this.renewAdoptLook(beat, rows).finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async renewAdoptLook(beat: Promise<void>, rows?: LeaseRows): Promise<void> {
    await beat;
    if (this.keepsOwner) await this.p.countdowns.renewLeases();
    await this.p.countdowns.recover(TAKEOVER_REASON, rows?.armed);
    void this.ctx.track(this.p.reconciler.reconcilePending(rows?.pending));
    const due = rows?.parks ?? (await this.p.parkWakes.due());
    const woken = await this.p.parkWakes.wakeDue(due);
    this.p.parkChecks.startDue(due);
    // Before the owed looks: a check whose process died is owed one, which runs it again.
    await this.p.verifications.tick(TAKEOVER_REASON);
    // Handed rows were read before these wakes: the looks they owed are taken with them, not a tick later.
    await this.p.looks.recheckOwed("recheck", { owed: rows ? [...rows.owed, ...woken] : undefined });
  }
}
