// The store's contract (contract-cases.ts) under OpenCode's Bun: on bun:sqlite and on PostgreSQL through Bun's SQL
// client, run by bun-contract-runner.ts in the Bun inside the opencode binary.
import { describe, expect, it } from "vitest";
import { startProcess } from "../crash/processes.js";
import { freshDatabase } from "../support/pg-database.js";
import { CONTRACT_CASES } from "./contract-cases.js";

describe("the store's contract under OpenCode's Bun", () => {
  it("passes every case on bun:sqlite and on PostgreSQL through Bun's SQL client", { timeout: 120_000 }, async () => {
    const bun = startProcess("bun", "../store/bun-contract-runner.ts", { PG_URL: await freshDatabase("bun_contract") });
    const line = (await bun.waitFor("results", 110_000)) as {
      runtime: string;
      results: Array<{ backend: string; name: string; ok: boolean; error?: string }>;
    };
    expect(line.runtime).toMatch(/^bun 1\./);
    expect(line.results.filter((r) => !r.ok)).toEqual([]);
    for (const backend of ["bun:sqlite", "bun-sql"])
      expect(line.results.filter((r) => r.backend === backend).map((r) => r.name)).toEqual(
        CONTRACT_CASES.map((c) => c.name),
      );
  });
});
