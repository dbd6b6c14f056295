// The store's contract (contract-cases.ts) on a SQLite file under Node (better-sqlite3). The same cases run on
// PostgreSQL under Node (contract.postgres.test.ts) and on both databases under OpenCode's Bun (contract.bun.test.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, it } from "vitest";
import { openStore } from "../../src/store/open.js";
import { CONTRACT_CASES, withWorld, type ContractDatabase } from "./contract-cases.js";

const folders: string[] = [];
afterAll(() => folders.forEach((f) => rmSync(f, { recursive: true, force: true })));

function sqliteFile(): ContractDatabase {
  const folder = mkdtempSync(join(tmpdir(), "tc-contract-"));
  folders.push(folder);
  return { open: (options) => openStore(join(folder, "state.db"), options) };
}

describe("the store's contract under Node, on better-sqlite3", () => {
  it.each(CONTRACT_CASES.map((c) => [c.name, c] as const))("%s", (_name, c) => withWorld(sqliteFile(), c.run));
});
