import type { Command } from "commander";
import { examples, globals } from "../output.js";

export interface StopOptions {
  directory?: string;
  force?: boolean;
}

export function registerStopResume(program: Command): void {
  program
    .command("stop")
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
    .option("--directory <dir>", "with --force: the project directory of that session (default: this one)")
    .action(async (sessionId: string, options: StopOptions, command: Command) =>
      (await import("../actions/stop-resume.js")).stop(sessionId, options, globals(command)),
    );

  program
    .command("resume")
    .addHelpText("after", examples("todo-continuation resume ses_4f2a…"))
    .description("lift the durable stop or the pause of a session and start its loop protections over")
    .argument("<sessionID>", "the OpenCode session id (ses_…)")
    .action(async (sessionId: string, _options: unknown, command: Command) =>
      (await import("../actions/stop-resume.js")).resume(sessionId, globals(command)),
    );
}
