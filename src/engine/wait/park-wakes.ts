// Parks whose time has come, woken: at each lease tick, the parks of this engine's scope due by now (read here, or
// handed by a fleet replica that read all its servers' at once) are woken by the store's compare-and-swap, so that of
// every process and replica watching the same park exactly one wakes it. A wake owes the session a look at once; the
// looks this tick takes next include those, so a woken session is judged through every guard without waiting a tick.
// A park whose check is due but whose time is not is the check runner's, not this.
//
// A park found late by more than the jitter window came due while no process was there to wake it (OpenCode down,
// the machine asleep): every park of a long outage is due at once, and woken at once they would all call the provider
// in the same second. Each is woken at its session's own point of the window after it was first found late instead,
// remembered in memory only: a process that dies meanwhile leaves the parks due, and the next one spreads them again.
import type { OwedLook } from "../../store/types.js";
import type { ParkRow } from "../../store/schema.js";
import { wake } from "../../store/changes/wake.js";
import { parksDueIn } from "../../store/reads.js";
import { staggerOf } from "../../core/limits/limit-park.js";
import type { EngineContext } from "../context.js";

export class ParkWakes {
  /** The late parks seen at the last round, by id: when each was first found late. */
  private lateSince = new Map<string, number>();

  constructor(private readonly ctx: EngineContext) {}

  /** The parks of this engine's scope whose time or next check has come. */
  due(): Promise<ParkRow[]> {
    return this.ctx.store.read(parksDueIn(this.ctx.followed, this.ctx.clock.now()));
  }

  /** Wakes the parks due by now (`due`: as the caller read them); the looks the wakes owed, for the tick to take. */
  async wakeDue(due?: readonly ParkRow[]): Promise<OwedLook[]> {
    const { ctx } = this;
    const now = ctx.clock.now();
    const rows = due ?? (await this.due());
    const windowMs = ctx.config.wakeJitterSeconds * 1000;
    const lateSince = new Map<string, number>();
    const wakeNow: Array<{ park: ParkRow; detail: Record<string, unknown> }> = [];
    for (const park of rows) {
      if (park.wakeAt > now) continue;
      const lateMs = now - park.wakeAt;
      if (lateMs <= windowMs) {
        wakeNow.push({ park, detail: { parkId: park.id } });
        continue;
      }
      const since = this.lateSince.get(park.id) ?? now;
      lateSince.set(park.id, since);
      if (now >= since + staggerOf(park.sessionId, windowMs))
        wakeNow.push({ park, detail: { parkId: park.id, lateMs } });
    }
    // Those not seen again were woken, or ended elsewhere.
    this.lateSince = lateSince;
    const woken = await Promise.all(
      wakeNow.map(({ park, detail }) =>
        ctx.lanes.post(park.sessionId, () =>
          ctx.store.change(wake(ctx.scope(park.sessionId), "time", ctx.clock.now(), detail)),
        ),
      ),
    );
    return woken.flatMap((result) => (result?.owed ? [result.owed] : []));
  }
}
