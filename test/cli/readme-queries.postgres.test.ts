// docs/database.md's PostgreSQL queries run, as written, on a real server against the same history as the SQLite ones, and
// return the same rows.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineFixture } from "../support/engine-fixture.js";
import { pgRows } from "../support/test-database.js";
import { expectPromisedRows, readmeQueries, S, seeded } from "./readme-queries.js";

let pg: EngineFixture;

beforeAll(async () => {
  pg = await seeded("postgres");
}, 60_000);

afterAll(async () => {
  await pg.destroy();
});

describe("README queries", () => {
  it("each PostgreSQL version returns the same rows as the SQLite one", () => {
    const queries = readmeQueries("postgresql");
    expect(queries).toHaveLength(readmeQueries().length);
    const rows = pgRows(pg.dbPath);
    expectPromisedRows(queries.map((q) => rows.all<Record<string, unknown>>(q.replaceAll("ses_…", S))));
  });
});
