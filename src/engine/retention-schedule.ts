// History older than `retentionDays` is deleted a minute after start (not during OpenCode's own start-up), then every
// six hours, in small batches that never hold the write lock for long (store/batches/prune-history.ts).
import { prune } from "../store/batches/prune-history.js";
import type { EngineContext } from "./context.js";

const FIRST_RUN_MS = 60_000;
const PERIOD_MS = 6 * 3_600_000;

export class RetentionSchedule {
  constructor(private readonly ctx: EngineContext) {}

  start(): void {
    if (this.ctx.config.retentionDays > 0) this.schedule(FIRST_RUN_MS);
  }

  private schedule(delayMs: number): void {
    this.ctx.timers.schedule("retention", delayMs, () => {
      void this.ctx.track(this.run()).finally(() => {
        if (!this.ctx.lifecycle.ending) this.schedule(PERIOD_MS);
      });
    });
  }

  private async run(): Promise<void> {
    const { ctx } = this;
    if (!ctx.lifecycle.deciding) return;
    const days = ctx.config.retentionDays;
    const report = await prune(ctx.store, { cutoff: ctx.clock.now() - days * 86_400_000 });
    if (report.auditEvents + report.countdowns + report.injections + report.sessions > 0)
      ctx.log("info", `retention: deleted history older than ${days} days`, { ...report });
  }
}
