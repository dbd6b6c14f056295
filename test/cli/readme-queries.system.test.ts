// docs/database.md's queries with the clients users query with: the sqlite3 CLI of this machine (Debian's 3.40, older than
// the SQLite the package bundles) on a real file, and psql on a real server.
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineFixture } from "../support/engine-fixture.js";
import { expectPromisedRows, readmeQueries, S, seeded } from "./readme-queries.js";

function sqlite3(db: string, sql: string): Array<Record<string, unknown>> {
  const out = execFileSync("sqlite3", ["-json", db, sql], { encoding: "utf8" });
  return out.trim() === "" ? [] : (JSON.parse(out) as Array<Record<string, unknown>>);
}

/** psql's rows as JSON, so that they compare as the other clients' do. */
function psql(url: string, sql: string): Array<Record<string, unknown>> {
  const statement = `SELECT coalesce(json_agg(t), '[]'::json) FROM (${sql}) t`;
  const out = execFileSync("psql", [url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", statement], {
    encoding: "utf8",
  });
  return JSON.parse(out) as Array<Record<string, unknown>>;
}

let f: EngineFixture;
let pg: EngineFixture;

beforeAll(async () => {
  f = await seeded("sqlite");
  pg = await seeded("postgres");
}, 60_000);

afterAll(async () => {
  await f.destroy();
  await pg.destroy();
});

describe("README queries with the users' own clients", () => {
  it("the sqlite3 CLI is the 3.40 the README promises to work with", () => {
    expect(execFileSync("sqlite3", ["--version"], { encoding: "utf8" })).toMatch(/^3\.\d+/);
  });

  it("each query runs with the sqlite3 CLI on a real file and returns the rows it promises", () => {
    expectPromisedRows(readmeQueries().map((q) => sqlite3(f.dbPath, q.replaceAll("ses_…", S))));
  });

  it("each PostgreSQL version runs with psql and returns the same rows", () => {
    expectPromisedRows(readmeQueries("postgresql").map((q) => psql(pg.dbPath, q.replaceAll("ses_…", S))));
  });
});
