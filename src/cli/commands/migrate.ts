import type { Command } from "commander";
import { examples } from "../output.js";

export function migrateCommand(command: Command): Command {
  return command
    .addHelpText(
      "after",
      examples("todo-continuation migrate", "todo-continuation --db ~/backup/todo-continuation.db migrate"),
    )
    .description("create the database if needed and apply the shipped migrations (the plugin also does this at start)");
}
