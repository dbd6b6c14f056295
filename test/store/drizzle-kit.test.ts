// Users migrate with drizzle-kit: `drizzle-kit migrate` with the shipped drizzle.config.ts on their file, after
// which the plugin opens it without migrating again (both use the same __drizzle_migrations table).
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../crash/processes.js";
import { tempFolder } from "../support/engine-fixture.js";
import { openSqlite } from "../../src/store/sqlite/open.js";
import { schemaState } from "../../src/store/sqlite/diagnostics.js";

describe("drizzle-kit migrate as users run it", () => {
  it("migrates a user's file; the enforcer then finds nothing to apply", { timeout: 60_000 }, async () => {
    const db = join(tempFolder(), "user.db");
    const output = execFileSync(process.execPath, [join(ROOT, "node_modules", "drizzle-kit", "bin.cjs"), "migrate"], {
      cwd: ROOT,
      env: { ...process.env, TODO_CONTINUATION_DB: db },
      encoding: "utf8",
    });
    expect(output).toMatch(/migrations applied successfully/i);
    const store = await openSqlite(db);
    try {
      expect(store.migration.applied).toBe(0);
      expect(schemaState(store.raw)).toMatchObject({ pending: 0, newer: false, applied: store.migration.shipped });
      expect(
        store.raw
          .all("SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name")
          .map((r) => (r as { name: string }).name),
      ).toEqual(["armed_countdowns", "continuation_costs", "decisions", "injection_history", "skip_reasons"]);
    } finally {
      store.close();
    }
  });
});
