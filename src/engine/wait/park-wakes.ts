// Parks whose time has come, woken: at each lease tick, the parks of this engine's scope due by now (read here, or
// handed by a fleet replica that read all its servers' at once) are woken by the store's compare-and-swap, so that of
// every process and replica watching the same park exactly one wakes it. A wake owes the session a look at once; the
// looks this tick takes next include those, so a woken session is judged through every guard without waiting a tick.
// A park whose check is due but whose time is not is the check runner's, not this.
import type { OwedLook } from "../../store/types.js";
import type { ParkRow } from "../../store/schema.js";
import { wake } from "../../store/changes/wake.js";
import { parksDueIn } from "../../store/reads.js";
import type { EngineContext } from "../context.js";

export class ParkWakes {
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
    const timeCame = rows.filter((park) => park.wakeAt <= now);
    const woken = await Promise.all(
      timeCame.map((park) =>
        ctx.lanes.post(park.sessionId, () =>
          ctx.store.change(wake(ctx.scope(park.sessionId), "time", ctx.clock.now(), { parkId: park.id })),
        ),
      ),
    );
    return woken.flatMap((result) => (result?.owed ? [result.owed] : []));
  }
}
