// The store's contract (contract-cases.ts) on every database the enforcer runs on: a SQLite file under Node
// (better-sqlite3) and PostgreSQL under Node (node-postgres) here, and both again under OpenCode's Bun (bun:sqlite,
// Bun's SQL client) through bun-contract-runner.ts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open.js";
import { startProcess } from "../crash/processes.js";
import { freshDatabase } from "../support/pg-database.js";
import { CONTRACT_CASES, withWorld, type ContractDatabase } from "./contract-cases.js";

const folders: string[] = [];
afterAll(() => folders.forEach((f) => rmSync(f, { recursive: true, force: true })));

function sqliteFile(): ContractDatabase {
  const folder = mkdtempSync(join(tmpdir(), "tc-contract-"));
  folders.push(folder);
  return { open: (options) => openStore(join(folder, "state.db"), options) };
}

async function postgres(): Promise<ContractDatabase> {
  const url = await freshDatabase("contract");
  return { open: (options) => openStore(url, options) };
}

const cases = CONTRACT_CASES.map((c) => [c.name, c] as const);

describe("the store's contract under Node, on better-sqlite3", () => {
  it.each(cases)("%s", (_name, c) => withWorld(sqliteFile(), c.run));
});

describe("the store's contract under Node, on PostgreSQL (node-postgres)", () => {
  it.each(cases)("%s", async (_name, c) => withWorld(await postgres(), c.run));
});

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
