// The SQL docs/database.md hands users runs, as written, on a real database file the engine wrote, through the SQLite the
// package bundles (the sqlite3 CLI users query with is readme-queries.system.test.ts's).
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineFixture } from "../support/engine-fixture.js";
import { expectPromisedRows, readmeQueries, S, seeded } from "./readme-queries.js";

let f: EngineFixture;

beforeAll(async () => {
  f = await seeded("sqlite");
}, 60_000);

afterAll(async () => {
  await f.destroy();
});

describe("README queries", () => {
  it("each query runs on a real file and returns the rows it promises", () => {
    const queries = readmeQueries();
    expect(queries.length).toBeGreaterThanOrEqual(6);
    const db = new Database(f.dbPath, { readonly: true });
    try {
      const results = queries.map((q) => db.prepare(q.replaceAll("ses_…", S)).all());
      expectPromisedRows(results as Array<Array<Record<string, unknown>>>);
    } finally {
      db.close();
    }
  });
});
