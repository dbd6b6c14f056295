// The SQL the README hands users must run, as written, with the sqlite3 CLI of this machine (3.40) against a real
// database file the engine wrote.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../crash/processes.js";
import { ev } from "../support/events.js";
import { drained, startEngine, type EngineFixture } from "../support/engine-fixture.js";
import { psqlRows, type TestBackend } from "../support/test-database.js";

/** The README's queries for one dialect: its ```sql blocks (SQLite) or its ```postgresql ones. */
function readmeQueries(fence = "sql"): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### Query it yourself"), readme.indexOf("### Retention"));
  const blocks = section.matchAll(new RegExp("```" + fence + "\\n([\\s\\S]*?)```", "g"));
  const sql = [...blocks].map((m) => m[1]!).join("\n");
  return sql
    .split(";")
    .map((q) => q.replace(/--[^\n]*\n/g, "").trim())
    .filter(Boolean);
}

function sqlite3(db: string, sql: string): unknown[] {
  const out = execFileSync("sqlite3", ["-json", db, sql], { encoding: "utf8" });
  return out.trim() === "" ? [] : (JSON.parse(out) as unknown[]);
}

const S = "ses_readme";

/** The same history on either backend: one continuation, then a stagnation stop, and one countdown left armed. */
async function seeded(backend: TestBackend): Promise<EngineFixture> {
  const f = await startEngine({ backend, config: { countdownSeconds: 0.05, toast: false, stagnationLimit: 1 } });
  f.host.addUserMessage(S, "go");
  f.host.setTodos(S, [
    ["a", "completed"],
    ["b", "pending"],
  ]);
  for (let i = 0; i < 3; i++) {
    f.enforcer.handleEvent(ev.idle(S));
    await drained(f);
  }
  f.host.setTodos("ses_waiting", [["x", "pending"]]);
  const long = await startEngine({
    backend,
    folder: f.folder,
    host: f.host,
    config: { countdownSeconds: 600, toast: false },
  });
  long.enforcer.handleEvent(ev.idle("ses_waiting"));
  await long.enforcer.settled();
  await long.close();
  return f;
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

/** What each query must return, whichever database ran it. */
function expectPromisedRows(results: Array<Array<Record<string, unknown>>>) {
  const [history, skips, armed, decisions, perDay, limited] = results;
  expect(history).toMatchObject([{ status: "sent", agent: "build", open: "1/2" }]);
  expect(skips).toContainEqual(expect.objectContaining({ reason: "stagnation" }));
  expect(armed).toMatchObject([{ session_id: "ses_waiting" }]);
  expect(Number(armed![0]!.seconds_left)).toBeGreaterThan(500);
  expect(decisions!.map((d) => d.event)).toEqual(["armed", "fired", "injected", "skipped", "skipped"]);
  expect(perDay).toHaveLength(1);
  expect([perDay![0]!.sent, perDay![0]!.failed, perDay![0]!.unknown].map(Number)).toEqual([1, 0, 0]);
  expect(limited).toMatchObject([{ session_id: S, reason: "stagnation" }]);
}

describe("README queries", () => {
  it("the sqlite3 CLI is the 3.40 the README promises to work with", () => {
    expect(execFileSync("sqlite3", ["--version"], { encoding: "utf8" })).toMatch(/^3\.\d+/);
  });

  it("each query runs on a real file and returns the rows it promises", () => {
    const queries = readmeQueries();
    expect(queries.length).toBeGreaterThanOrEqual(6);
    const results = queries.map((q) => sqlite3(f.dbPath, q.replaceAll("ses_…", S)));
    expectPromisedRows(results as Array<Array<Record<string, unknown>>>);
  });

  it("each PostgreSQL version runs with psql on a real server and returns the same rows", () => {
    const queries = readmeQueries("postgresql");
    expect(queries).toHaveLength(readmeQueries().length);
    const rows = psqlRows(pg.dbPath);
    expectPromisedRows(queries.map((q) => rows.all<Record<string, unknown>>(q.replaceAll("ses_…", S))));
  });
});
