import type { Command } from "commander";
import { durationArg, examples, globals, positiveIntegerArg } from "../output.js";

export interface PruneOptions {
  olderThan: number;
  batch: number;
  dryRun?: boolean;
}

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
    .action(async (options: PruneOptions, command: Command) =>
      (await import("../actions/prune.js")).prune(options, globals(command)),
    );
}
