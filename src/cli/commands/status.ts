import type { Command } from "commander";
import { examples } from "../output.js";

export function statusCommand(command: Command): Command {
  return command
    .addHelpText("after", examples("todo-continuation status", "todo-continuation status --json"))
    .description("countdowns armed now, stopped and paused sessions, and continuations not settled");
}
