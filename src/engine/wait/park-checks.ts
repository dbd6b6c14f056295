// The checks of parks, run when due: at each lease tick, a parked park whose next check has come (and whose time to
// wake has not) gets one run, claimed first in the database so that of every process and replica watching it exactly
// one runs it (check-run.ts). A run that exits 0 wakes the park (cause `check`, its output carried into the
// continuation's prompt); one that does not keeps its output on the park and waits for the next. A run is never
// doubled here either: a tick while it runs leaves it be. A check the agent's permissions would not let it run was
// refused when the park was asked for (continue_later); nothing here runs anything else.
import type { ParkRow } from "../../store/schema.js";
import { checkFailed, claimCheckRun } from "../../store/changes/check-run.js";
import { wake } from "../../store/changes/wake.js";
import type { EngineContext } from "../context.js";
import { runCheck, type RunCheck } from "./run-check.js";

/** What of a passed check's output the `woke` row keeps (its prompt keeps the last lines). */
const AUDIT_OUTPUT_CHARS = 2000;

export class ParkChecks {
  private readonly running = new Set<string>();

  constructor(
    private readonly ctx: EngineContext,
    private readonly run: RunCheck = runCheck,
  ) {}

  /** Starts a run of each check due among `due` (the parks due by now, as the tick read them). */
  startDue(due: readonly ParkRow[]): void {
    const now = this.ctx.clock.now();
    for (const park of due) {
      if (park.checkCommand === null || park.nextCheckAt === null) continue;
      if (park.nextCheckAt > now || park.wakeAt <= now || this.running.has(park.id)) continue;
      this.running.add(park.id);
      void this.ctx.track(this.runOnce(park).finally(() => this.running.delete(park.id)));
    }
  }

  private async runOnce(park: ParkRow): Promise<void> {
    const { ctx } = this;
    const scope = ctx.scope(park.sessionId);
    if (!(await ctx.store.change(claimCheckRun(scope, park, ctx.clock.now())))) return;
    const result = await this.run(park.checkCommand!, park.directory);
    const run = park.checkRuns + 1;
    if (result.exitCode === 0) {
      const detail = { parkId: park.id, run, output: result.output.slice(-AUDIT_OUTPUT_CHARS) };
      await ctx.lanes.post(park.sessionId, () => ctx.store.change(wake(scope, "check", ctx.clock.now(), detail)));
      return;
    }
    await ctx.store.change(checkFailed(scope, park.id, result.output));
    ctx.log("debug", "a park's check did not pass", {
      sessionId: park.sessionId,
      parkId: park.id,
      run,
      exitCode: result.exitCode,
      timedOut: result.timedOut,
    });
  }
}
