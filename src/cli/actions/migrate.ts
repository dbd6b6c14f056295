import { databasePath, openForWriting, query, shownLocation } from "../database.js";
import { print, printJson, type GlobalOptions } from "../output.js";

export async function migrate(_options: object, { db, json }: GlobalOptions): Promise<void> {
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
}
