import { defineConfig } from "drizzle-kit";
import { configuredDatabasePath } from "./src/store/open/default-path.js";

// `npx drizzle-kit migrate` applies migrations/ to the file named by TODO_CONTINUATION_DB (else the default path),
// recording them in the same `__drizzle_migrations` table the plugin reads at start-up.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/store/schema.ts",
  out: "./migrations",
  dbCredentials: { url: configuredDatabasePath() },
});
