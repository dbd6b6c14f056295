import type { Command } from "commander";
import { examples, globals } from "../output.js";

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .addHelpText(
      "after",
      examples("todo-continuation migrate", "todo-continuation --db ~/backup/todo-continuation.db migrate"),
    )
    .description("create the database if needed and apply the shipped migrations (the plugin also does this at start)")
    .action(async (_options: unknown, command: Command) =>
      (await import("../actions/migrate.js")).migrate(globals(command)),
    );
}
