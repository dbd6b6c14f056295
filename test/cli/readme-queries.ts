// The SQL the docs hand users (docs/database.md), and the history it is run against: one continuation, then a
// stagnation stop, and one countdown left armed, written by the engine. Each database's suite runs the queries its own
// way.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { ROOT } from "../crash/processes.js";
import { ev } from "../support/events.js";
import { drained, startEngine, type EngineFixture } from "../support/engine-fixture.js";
import type { TestBackend } from "../support/test-database.js";

/** The ready queries of docs/database.md for one dialect: its ```sql blocks (SQLite) or its ```postgresql ones. */
export function readmeQueries(fence = "sql"): string[] {
  const readme = readFileSync(join(ROOT, "docs", "database.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Query it yourself"), readme.indexOf("## Retention"));
  const blocks = section.matchAll(new RegExp("```" + fence + "\\n([\\s\\S]*?)```", "g"));
  const sql = [...blocks].map((m) => m[1]!).join("\n");
  return sql
    .split(";")
    .map((q) => q.replace(/--[^\n]*\n/g, "").trim())
    .filter(Boolean);
}

export const S = "ses_readme";

/** The same history on either backend: one continuation, then a stagnation stop, and one countdown left armed. */
export async function seeded(backend: TestBackend): Promise<EngineFixture> {
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

/** What each query must return, whichever database and client ran it. */
export function expectPromisedRows(results: Array<Array<Record<string, unknown>>>) {
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
