import type { Command } from "commander";
import { examples } from "../output.js";

export function stopCommand(command: Command): Command {
  return command
    .addHelpText(
      "after",
      examples(
        "todo-continuation stop ses_4f2a…",
        "todo-continuation stop ses_4f2a… --force --directory ~/project   # a session not seen yet",
      ),
    )
    .description("set the durable stop on a session: no continuation (also after restarts) until resumed")
    .argument("<sessionID>", "the OpenCode session id (ses_…)")
    .option("--force", "stop a session the database has not seen yet (its first idle is then held)")
    .option("--directory <dir>", "with --force: the project directory of that session (default: this one)");
}

export function resumeCommand(command: Command): Command {
  return command
    .addHelpText("after", examples("todo-continuation resume ses_4f2a…"))
    .description("lift the durable stop or the pause of a session and start its loop protections over")
    .argument("<sessionID>", "the OpenCode session id (ses_…)");
}
