import type { Command } from "commander";
import { prune } from "../../store/prune-history.js";
import { withStore } from "../database.js";
import { localTime } from "../format.js";
import { durationArg, examples, globals, positiveIntegerArg, print, printJson, snakeCased } from "../output.js";

export function registerPrune(program: Command): void {
  program
    .command("prune")
    .addHelpText(
      "after",
      examples("todo-continuation prune --older-than 30d --dry-run", "todo-continuation prune --older-than 90d"),
    )
    .description("delete settled history older than a duration, in small batches (safe while OpenCode runs)")
    .requiredOption("--older-than <duration>", "e.g. 30d, 12h, 90m", (v) =>
      durationArg("--older-than", v, "30d, 12h or 90m"),
    )
    .option("--batch <n>", "rows per transaction", (v) => positiveIntegerArg("--batch", v), 500)
    .option("--dry-run", "count what would go, delete nothing")
    .action(async (options: { olderThan: number; batch: number; dryRun?: boolean }, command: Command) => {
      const { db, json } = globals(command);
      const cutoff = Date.now() - options.olderThan;
      const report = await withStore(db, (store) =>
        prune(store, { cutoff, batchSize: options.batch, dryRun: options.dryRun }),
      );
      if (json) return printJson(snakeCased({ cutoff, dryRun: options.dryRun === true, ...report }));
      const verb = options.dryRun ? "would delete" : "deleted";
      print(
        `${verb} history before ${localTime(cutoff)}: ${report.auditEvents} audit rows, ${report.countdowns} closed countdowns, ` +
          `${report.injections} settled injections, ${report.sessions} deleted sessions, ${report.bills} bills, ` +
          `${report.notices} settled notices` +
          (options.dryRun
            ? ""
            : ` (${report.batches} batches, median ${report.medianBatchMs.toFixed(1)} ms, longest ${report.longestBatchMs.toFixed(1)} ms)`),
      );
    });
}
