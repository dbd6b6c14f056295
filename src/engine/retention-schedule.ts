// History older than `retentionDays` is deleted a minute after start (not during OpenCode's own start-up), then every
// six hours, in small batches that never hold the write lock for long (store/batches/prune-history.ts).
import { prune } from "../store/batches/prune-history.js";
import type { EngineContext } from "./context.js";
import { loopModes } from "./modes.js";

const FIRST_RUN_MS = 60_000;
const PERIOD_MS = 6 * 3_600_000;
const TIMER = "retention";

export class RetentionSchedule {
  private readonly modes = loopModes("the retention schedule");
  /** The prune running now, if one is: a stop waits for it. */
  private run: Promise<void> | undefined;

  constructor(private readonly ctx: EngineContext) {}

  /** Nothing with `retentionDays` 0. */
  start(): Promise<void> {
    return this.modes.start(async () => {
      if (this.ctx.config.retentionDays > 0) this.schedule(FIRST_RUN_MS);
    });
  }

  /** No more runs; resolves once the prune in flight is over. Called by the engine's root. */
  stop(): Promise<void> {
    return this.modes.stop(async () => {
      this.ctx.timers.cancel(TIMER);
      // Its failure, if it fails, is the background job's to report.
      await this.run?.catch(() => undefined);
    });
  }

  private schedule(delayMs: number): void {
    this.ctx.timers.schedule(TIMER, delayMs, () => {
      this.run = this.prune().finally(() => {
        this.run = undefined;
        if (this.modes.is("running")) this.schedule(PERIOD_MS);
      });
      void this.ctx.track(this.run);
    });
  }

  private async prune(): Promise<void> {
    const { ctx } = this;
    if (!ctx.lifecycle.deciding) return;
    const days = ctx.config.retentionDays;
    const report = await prune(ctx.store, { cutoff: ctx.clock.now() - days * 86_400_000 });
    if (report.auditEvents + report.countdowns + report.injections + report.sessions > 0)
      ctx.log("info", `retention: deleted history older than ${days} days`, { ...report });
  }
}
