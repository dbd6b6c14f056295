import type { Command } from "commander";
import { schemaState } from "../../store/sqlite/queries.js";
import { databasePath, openForWriting, query } from "../database.js";
import { globals, print, printJson } from "../output.js";

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description("create the database if needed and apply the shipped migrations (the plugin also does this at start)")
    .action(async (_options: unknown, command: Command) => {
      const { db, json } = globals(command);
      const path = databasePath(db);
      const store = await openForWriting(path);
      try {
        const state = query(() => schemaState(store.raw));
        if (json) return printJson({ path, applied: store.migration.applied, schema: state });
        print(
          store.migration.applied > 0
            ? `applied ${store.migration.applied} migration(s) to ${path}; schema is at ${state.applied}/${state.shipped}`
            : `${path} is up to date (${state.applied}/${state.shipped} migrations)`,
        );
      } finally {
        store.close();
      }
    });
}
