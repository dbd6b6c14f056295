// `todo-continuation status` answers "why is this session not continuing" for every kind of stop, not only a durable
// stop: a session stopped by its budget (an engine's real decision), and the stops the core tells read from their rows,
// each with the toast's words and the command that lifts it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, requireBuiltCli } from "../support/cli.js";
import { ev } from "../support/events.js";
import { drained, startEngine, type EngineFixture } from "../support/engine-fixture.js";

let f: EngineFixture;
const BUDGET = "ses_status_budget";

beforeAll(async () => {
  requireBuiltCli();
  f = await startEngine({ config: { toast: false, countdownSeconds: 0.05, maxContinuations: 1 } });
  f.host.addUserMessage(BUDGET, "go");
  f.host.setTodos(BUDGET, [
    ["a", "pending"],
    ["b", "pending"],
  ]);
  f.enforcer.handleEvent(ev.idle(BUDGET));
  await drained(f);
  // The continuation's turn ended: its idle finds the budget of 1 spent.
  f.enforcer.handleEvent(ev.idle(BUDGET));
  await drained(f);
}, 30_000);

afterAll(async () => {
  await f.destroy();
});

/** A session row as the engine leaves it after a stop it told (`notified_stop`), and that stop's skip row. */
function toldStop(sessionId: string, reason: string, detail: object, at: number): void {
  const db = f.db;
  db.run(
    "INSERT INTO sessions (session_id, directory, notified_stop, created_at, updated_at) VALUES (?, '/work/project', ?, ?, ?)",
    sessionId,
    reason,
    at,
    at,
  );
  db.run(
    "INSERT INTO audit_events (at, session_id, event, reason, detail) VALUES (?, ?, 'skipped', ?, ?)",
    at,
    sessionId,
    reason,
    JSON.stringify(detail),
  );
}

describe("status names every stopped session with why and the way on", () => {
  it("a budget stop: the toast's words and `allow`", async () => {
    expect(f.rows.session(BUDGET)).toMatchObject({ notified_stop: "budget_exhausted", stopped_at: null });
    const status = await cli(["--db", f.dbPath, "status"]);
    expect(status.code).toBe(0);
    expect(status.stdout).not.toContain("Stopped sessions: none");
    expect(status.stdout).toMatch(
      new RegExp(
        `Stopped sessions \\(1\\):\\nSESSION\\s+SINCE\\s+REASON\\s+WHY\\s+GO ON\\s+DIRECTORY\\n${BUDGET}\\s+\\S+ \\S+\\s+budget_exhausted\\s+stopped: the budget of 1 is spent\\s+todo-continuation allow ${BUDGET}\\s+/work/project`,
      ),
    );
    const json = JSON.parse((await cli(["--db", f.dbPath, "--json", "status"])).stdout) as { held: unknown[] };
    expect(json.held).toEqual([
      {
        session_id: BUDGET,
        directory: "/work/project",
        since: expect.any(Number),
        reasons: ["budget_exhausted"],
        text: "stopped: the budget of 1 is spent",
        hint: "palette: Allow more to go on",
        go_on: `todo-continuation allow ${BUDGET}`,
      },
    ]);
  });

  it("the other stops the core tells, a durable stop over a told one, and the full context no resume lifts", async () => {
    const now = Date.now();
    toldStop("ses_status_stuck", "stagnation", { unproductiveContinuations: 3 }, now - 4000);
    toldStop("ses_status_cost", "cost_budget", { budget: "session_cost", spent: 0.5, limit: 0.5 }, now - 3000);
    toldStop("ses_status_full", "token_limit", {}, now - 2000);
    toldStop("ses_status_both", "budget_exhausted", { continuations: 20 }, now - 1000);
    f.db.run("UPDATE sessions SET stopped_at = ?, stop_source = 'cli' WHERE session_id = 'ses_status_both'", now);
    const json = JSON.parse((await cli(["--db", f.dbPath, "--json", "status"])).stdout) as {
      held: Array<{ session_id: string; reasons: string[]; text: string; go_on: string }>;
    };
    expect(
      json.held.filter((h) => h.session_id !== BUDGET).map((h) => [h.session_id, h.reasons, h.text, h.go_on]),
    ).toEqual([
      [
        "ses_status_stuck",
        ["stagnation"],
        "stopped: 3 times without progress",
        "todo-continuation resume ses_status_stuck",
      ],
      ["ses_status_cost", ["cost_budget"], "stopped: $0.50 of $0.50 spent", "todo-continuation allow ses_status_cost"],
      [
        "ses_status_full",
        ["token_limit"],
        "stopped: the context is full",
        "opencode --session ses_status_full (compact or write)",
      ],
      [
        "ses_status_both",
        ["stopped", "budget_exhausted"],
        "stopped from the command line",
        "todo-continuation resume ses_status_both",
      ],
    ]);
    const text = (await cli(["--db", f.dbPath, "status"])).stdout;
    expect(text).toContain("Stopped sessions (5):");
    expect(text).toMatch(/ses_status_both\s+\S+ \S+\s+stopped, budget_exhausted\s+stopped from the command line\s+/);
  });
});
