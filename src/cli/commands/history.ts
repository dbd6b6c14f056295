import type { Command } from "commander";
import { examples, globals, positiveIntegerArg } from "../output.js";

export interface HistoryOptions {
  session?: string;
  limit: number;
}

export function registerHistory(program: Command): void {
  program
    .command("history")
    .addHelpText(
      "after",
      examples("todo-continuation history --limit 10", "todo-continuation history --session ses_4f2a… --json"),
    )
    .description("continuation prompts sent (or tried), newest last")
    .option("--session <id>", "only this session")
    .option("--limit <n>", "how many of the newest to show", (v) => positiveIntegerArg("--limit", v), 50)
    .action(async (options: HistoryOptions, command: Command) =>
      (await import("../actions/history.js")).history(options, globals(command)),
    );
}
