// The store's cases (store-cases.ts) under Node, on better-sqlite3; store.bun.test.ts runs them under OpenCode's Bun.
import { rmSync } from "node:fs";
import { describe, it } from "vitest";
import { caseFolder, STORE_CASES } from "./store-cases.js";

describe("store under Node (better-sqlite3)", () => {
  it.each(STORE_CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const folder = caseFolder();
    try {
      await c.run(folder);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
