import type { Command } from "commander";
import { examples, globals } from "../output.js";

export function registerStatus(program: Command): void {
  program
    .command("status")
    .addHelpText("after", examples("todo-continuation status", "todo-continuation status --json"))
    .description("countdowns armed now, stopped and paused sessions, and continuations not settled")
    .action(async (_options: unknown, command: Command) =>
      (await import("../actions/status.js")).status(globals(command)),
    );
}
