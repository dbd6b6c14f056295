import type { Command } from "commander";
import { durationArg, examples, positiveIntegerArg } from "../output.js";

export function pruneCommand(command: Command): Command {
  return command
    .addHelpText(
      "after",
      examples("todo-continuation prune --older-than 30d --dry-run", "todo-continuation prune --older-than 90d"),
    )
    .description("delete settled history older than a duration, in small batches (safe while OpenCode runs)")
    .requiredOption("--older-than <duration>", "e.g. 30d, 12h, 90m", (v) =>
      durationArg("--older-than", v, "30d, 12h or 90m"),
    )
    .option("--batch <n>", "rows per transaction", (v) => positiveIntegerArg("--batch", v), 500)
    .option("--dry-run", "count what would go, delete nothing");
}
