import type { Command } from "commander";
import { examples, positiveIntegerArg } from "../output.js";

export function historyCommand(command: Command): Command {
  return command
    .addHelpText(
      "after",
      examples(
        "todo-continuation history --limit 10",
        "todo-continuation history --session ses_4f2a… --json",
        "todo-continuation history --checks",
      ),
    )
    .description("continuation prompts sent (or tried), newest last")
    .option("--session <id>", "only this session")
    .option("--limit <n>", "how many of the newest to show", (v) => positiveIntegerArg("--limit", v), 50)
    .option("--checks", "the runs of the `verify` command on finished lists instead (how each ended, its last line)");
}
