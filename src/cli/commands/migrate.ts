import type { Command } from "commander";
import { databasePath, openForWriting, query, shownLocation } from "../database.js";
import { examples, globals, print, printJson } from "../output.js";

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .addHelpText(
      "after",
      examples("todo-continuation migrate", "todo-continuation --db ~/backup/todo-continuation.db migrate"),
    )
    .description("create the database if needed and apply the shipped migrations (the plugin also does this at start)")
    .action(async (_options: unknown, command: Command) => {
      const { db, json } = globals(command);
      const location = databasePath(db);
      const path = shownLocation(location);
      const store = await openForWriting(location);
      try {
        const state = await query(() => store.schemaState());
        const applied = store.migrated?.applied ?? 0;
        if (json) return printJson({ path, applied, schema: state });
        print(
          applied > 0
            ? `applied ${applied} migration(s) to ${path}; schema is at ${state.applied}/${state.shipped}`
            : `${path} is up to date (${state.applied}/${state.shipped} migrations)`,
        );
      } finally {
        await store.close();
      }
    });
}
