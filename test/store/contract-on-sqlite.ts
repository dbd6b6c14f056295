// Runs one subject's contract cases on a SQLite file under Node (better-sqlite3), a file per case: the job of each
// subject's test file (changes/arm.test.ts…). contract-cases.ts hands the same cases to the other drivers' runners.
import { join } from "node:path";
import { describe, it } from "vitest";
import { openStore } from "../../src/store/open/open.js";
import { tempFolder } from "../support/temp-folders.js";
import { withWorld, type ContractCase, type ContractDatabase } from "./contract-world.js";

function sqliteFile(): ContractDatabase {
  const folder = tempFolder("tc-contract-");
  return { open: (options) => openStore(join(folder, "state.db"), options) };
}

export function contractOnBetterSqlite(subject: string, cases: ContractCase[]): void {
  describe(`${subject}: the store's contract under Node, on better-sqlite3`, () => {
    it.each(cases.map((c) => [c.name, c] as const))("%s", (_name, c) => withWorld(sqliteFile(), c.run));
  });
}
