import { defineConfig } from "drizzle-kit";

// The PostgreSQL twin of drizzle.config.ts: `npx drizzle-kit generate --config drizzle.pg.config.ts` writes
// migrations-pg/; `migrate` applies them to the server named by TODO_CONTINUATION_DB (a postgres:// URL). The
// enforcer itself applies them at start, under an advisory lock, so replicas starting together migrate once.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/store/pg/schema.ts",
  out: "./migrations-pg",
  dbCredentials: { url: process.env.TODO_CONTINUATION_DB ?? "postgres://localhost/todo_continuation" },
});
