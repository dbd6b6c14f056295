// The real service (`todo-continuation serve`, the built CLI) following one simulated OpenCode server: every session
// is continued exactly as often as its todos need — none twice, none left with open todos — as it is against a real
// OpenCode (test/e2e/service.test.ts). What the benchmark of many servers builds on.
import { spawn, type ChildProcess } from "node:child_process";
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_BIN, requireBuiltCli } from "../support/cli.js";
import { startSimFleet, type SimFleet } from "../support/sim-opencode/fleet.js";
import { waitFor } from "../support/wait-for.js";

const SESSIONS = 50;
const TODOS = 3;

describe("the service following a simulated OpenCode server", () => {
  const root = mkdtempSync(join(tmpdir(), "tc-sim-service-"));
  const db = join(root, "todo-continuation.db");
  let fleet: SimFleet;
  let service: ChildProcess;
  let log = "";
  const rows = <T>(sql: string): T[] => {
    const handle = new Database(db, { readonly: true, fileMustExist: true });
    try {
      return handle.prepare(sql).all() as T[];
    } finally {
      handle.close();
    }
  };

  beforeAll(async () => {
    requireBuiltCli();
    fleet = await startSimFleet({
      servers: 1,
      sessionsPerServer: SESSIONS,
      todosPerSession: TODOS,
      turnMs: 300,
      startStaggerMs: 1000,
      paused: true,
    });
    const [server] = fleet.servers;
    service = spawn(
      process.execPath,
      [CLI_BIN, "serve", "--url", server!.url, "--directory", server!.directory, "--db", db, "--options"].concat(
        JSON.stringify({ countdownSeconds: 1 }),
      ),
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    service.stdout!.on("data", (c: Buffer) => (log += c.toString()));
    service.stderr!.on("data", (c: Buffer) => (log += c.toString()));
    await waitFor("the service connected to the event stream", () => /\bconnected to the event stream/.test(log), {
      timeoutMs: 20_000,
      report: () => log.slice(-3000),
    });
    // The sessions' first turns start once the service follows: their first idle is what it continues from.
    fleet.begin();
  }, 60_000);

  afterAll(async () => {
    service?.kill("SIGKILL");
    await fleet?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it(
    "continues every session exactly as often as its todos need: none doubled, none lost",
    { timeout: 120_000 },
    async () => {
      await waitFor(
        () => `every session finished (now ${JSON.stringify(fleet.stats().promptsPerSession)})`,
        () => fleet.stats().finished === SESSIONS,
        { timeoutMs: 90_000, report: () => log.slice(-3000) },
      );
      // At rest: nothing armed, pending or owed, so no prompt can follow without a new event.
      await waitFor("the service at rest", () => {
        const [row] = rows<{ armed: number; pending: number; owed: number }>(
          `SELECT (SELECT count(*) FROM countdowns WHERE state = 'armed') AS armed,
                (SELECT count(*) FROM injections WHERE status = 'pending') AS pending,
                (SELECT count(*) FROM sessions WHERE recheck_at IS NOT NULL) AS owed`,
        );
        return row!.armed + row!.pending + row!.owed === 0;
      });
      const stats = fleet.stats();
      expect(stats).toMatchObject({ doubled: 0, afterDone: 0, unfinished: 0, busy: 0, prompts: SESSIONS * TODOS });
      expect(stats.promptsPerSession).toEqual({ [TODOS]: SESSIONS });
      const done = rows<{ n: number }>(
        "SELECT count(DISTINCT session_id) AS n FROM audit_events WHERE event = 'skipped' AND reason = 'todos_complete'",
      );
      expect(done[0]!.n).toBe(SESSIONS);
      const sent = rows<{ n: number }>("SELECT count(*) AS n FROM injections WHERE status = 'sent'");
      expect(sent[0]!.n).toBe(SESSIONS * TODOS);
      const perContinuation = (n: number) => (n / stats.prompts).toFixed(1);
      console.log(
        `${SESSIONS} sessions × ${TODOS} continuations in ${(stats.elapsedMs / 1000).toFixed(1)} s; per continuation ` +
          `${perContinuation(stats.requests)} requests answered and ${perContinuation(stats.events)} events sent by the sim`,
      );
    },
  );
});
