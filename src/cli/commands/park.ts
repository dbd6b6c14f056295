import type { Command } from "commander";
import { examples } from "../output.js";

export function wakeCommand(command: Command): Command {
  return command
    .addHelpText("after", examples("todo-continuation wake ses_4f2a…"))
    .description("wake a parked session now: a running enforcer counts down and continues it (through every guard)")
    .argument("<sessionID>", "the OpenCode session id (ses_…)");
}

export function unparkCommand(command: Command): Command {
  return command
    .addHelpText("after", examples("todo-continuation unpark ses_4f2a…"))
    .description("drop a session's park: nothing wakes it, and it waits for you as after any stop of the loop")
    .argument("<sessionID>", "the OpenCode session id (ses_…)");
}
