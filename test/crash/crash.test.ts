// Kill an engine process with SIGKILL at random moments of the lifecycle, many times, restart it on the same database
// (a SQLite file, and a PostgreSQL database), and check that nothing armed is lost and no continuation reaches the host
// twice.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { tempFolder } from "../support/engine-fixture.js";
import { startProcess } from "./processes.js";
import { ScriptedServer } from "./scripted-server.js";
import { freshDatabase } from "../support/pg-database.js";
import { checkChecks, checkInvariants, checkParks, selectFrom, selectFromWithoutBlocking } from "./invariants.js";
import { openStore } from "../../src/store/open/open.js";
import { changeSession } from "../../src/store/changes/change-session.js";
import { sleep, waitFor } from "../support/wait-for.js";

/**
 * Each kill costs over half a CPU-second (a process start, its database opened, its calls), and `npm test` pays for
 * every one: 24 on a file and 8 on PostgreSQL land in the windows that matter many times over (20 on a file left 35
 * armed countdowns and 15 pending continuations to their restarts; 100 left 154 and 106). A soak run asks for more:
 * `CRASH_ITERATIONS=1000 CRASH_ITERATIONS_PG=300`. Fewer on PostgreSQL: each restart opens a pool and checks the
 * migrations over the network.
 */
const ITERATIONS = {
  file: Number(process.env.CRASH_ITERATIONS ?? 24),
  PostgreSQL: Number(process.env.CRASH_ITERATIONS_PG ?? 8),
};
/** Kills around checks: the same 4 sessions each time, each killed process leaving their checks interrupted. */
const CHECK_ITERATIONS = { file: 6, PostgreSQL: 4 };
/** Kills around parks: each process parks its own 4 sessions, so each kill lands in one park's life. */
const PARK_ITERATIONS = { file: 12, PostgreSQL: 6 };
/**
 * Where in its parks' lives a process is killed, in turn: as they are written, while they hold (they wake 1–2 s after
 * the idle: `retry-after: 1` and a 1 s jitter), and within 150 ms of the first wake (its look, countdown and prompt).
 */
const KILL_WINDOWS = ["at the park", "before the wake", "during the wake"] as const;

/**
 * Every this many kills lands as a prompt is stored and before it is answered, so a continuation the host has while its
 * injection is still pending is among the restarts' cases on every run, not only when a random kill happens to land in
 * those 20 ms (8 random kills on PostgreSQL once landed in none).
 */
const KILL_AT_PROMPT_EVERY = 4;

/** A process is killed within its first this many calls to OpenCode (about a second of its work when unloaded). */
const KILL_WITHIN_CALLS = 80;
/** Or after this long, if it made fewer (a process that hangs is killed all the same). */
const KILL_AT_LATEST_MS = 15_000;

describe.each(["file", "PostgreSQL"] as const)("crash points (%s)", (backend) => {
  const server = new ScriptedServer();
  let url: string;
  const folder = tempFolder("tc-crash-");
  let db = join(folder, "state.db");
  const iterations = ITERATIONS[backend];

  beforeAll(async () => {
    url = await server.start();
    if (backend === "PostgreSQL") db = await freshDatabase("crash");
  });
  afterAll(async () => {
    await server.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it(`survives ${iterations} SIGKILLs at random points`, { timeout: 600_000 }, async () => {
    // A lease far longer than a restart: adopting the dead process's countdowns must rely on its pid being gone.
    const env = { DB: db, HOST_URL: url, SESSIONS: "6", ROUNDS: "0", PAUSE_BEFORE_PROMPT_MS: "40", LEASE_MS: "15000" };
    const found = { armedAtRestart: 0, pendingAtRestart: 0, pendingDelivered: 0 };
    for (let i = 0; i < iterations; i++) {
      const running = startProcess("node", "engine-process.ts", env);
      await running.waitFor("ready");
      if (i % KILL_AT_PROMPT_EVERY === KILL_AT_PROMPT_EVERY - 1) {
        const pid = running.child.pid!;
        server.onPrompt = (from) => void (from === pid && running.child.kill("SIGKILL"));
        await Promise.race([running.exited, sleep(KILL_AT_LATEST_MS)]);
        server.onPrompt = undefined;
      } else {
        // Killed after a random number of calls to OpenCode (about five a look, one a prompt), not a random time: on a
        // loaded machine a time-based point lands before anything was decided, and the kills would cover nothing.
        await server.callsFrom(running.child.pid!, Math.floor(Math.random() * KILL_WITHIN_CALLS), KILL_AT_LATEST_MS);
      }
      running.child.kill("SIGKILL");
      await running.exited;
      found.armedAtRestart += selectFrom(db, { sqlite: "SELECT id FROM countdowns WHERE state = 'armed'" }).length;
      const pending = selectFrom<{ id: string }>(db, { sqlite: "SELECT id FROM injections WHERE status = 'pending'" });
      found.pendingAtRestart += pending.length;
      found.pendingDelivered += pending.filter((p) => server.prompts.some((d) => d.injectionId === p.id)).length;
    }
    const last = startProcess("node", "engine-process.ts", { ...env, ROUNDS: "3" });
    await last.waitFor("done", 60_000);
    await last.exited;

    const report = checkInvariants(db, server.prompts);
    console.log(
      `crash test (${backend}): ${iterations} SIGKILLs; at the restarts: ${found.armedAtRestart} armed countdowns, ` +
        `${found.pendingAtRestart} pending injections (${found.pendingDelivered} of them already delivered); ` +
        `in all: ${JSON.stringify(report.counts)}`,
    );
    expect(report.violations).toEqual([]);
    expect(report.counts.fired).toBeGreaterThan(iterations);
    // Every previous owner was dead, so each restart adopted at once by its pid, never by waiting out a lease.
    expect(report.counts.resumed_restart).toBeGreaterThan(0);
    expect(report.counts.resumed_lease_expired ?? 0).toBe(0);
    // The kills must actually have landed in the interesting windows, or the test proves little.
    expect(found.armedAtRestart).toBeGreaterThan(0);
    expect(found.pendingAtRestart).toBeGreaterThan(0);
  });

  it(
    `loses no wake and doubles no continuation when killed at the park, before or during the wake (${PARK_ITERATIONS[backend]} SIGKILLs)`,
    { timeout: 300_000 },
    async () => {
      const parksDb = backend === "PostgreSQL" ? await freshDatabase("crash_parks") : join(folder, "parks.db");
      const env = {
        DB: parksDb,
        HOST_URL: url,
        SESSIONS: "4",
        IDLE_MODE: "park",
        LEASE_MS: "1500",
        DIRECTORY: "/crash/parks",
      };
      const at = { parked: 0, woken: 0 };
      /** Waits until the point of a park's life where the process is to be killed. */
      const killPoint = async (window: (typeof KILL_WINDOWS)[number], prefix: string) => {
        if (window === "at the park") return sleep(Math.random() * 50);
        if (window === "before the wake") return sleep(300 + Math.random() * 600);
        // A park makes no call to OpenCode until it wakes: the first of this process's wakes is read from its row.
        await waitFor(
          "the first wake of the process's parks",
          async () =>
            (
              await selectFromWithoutBlocking(parksDb, {
                sqlite: `SELECT id FROM parks WHERE state = 'woke' AND session_id LIKE '${prefix}%'`,
              })
            ).length > 0,
          { timeoutMs: 10_000, interval: 20 },
        );
        await sleep(Math.random() * 150);
      };
      // A continuation starts a turn that OpenCode reports to whoever asks, as it does for a prompt delivered by a process
      // killed before it could record it: the process that finds it delivered sees the turn, and sends no second one.
      server.busyAfterPrompt = true;
      onTestFinished(() => {
        server.busyAfterPrompt = false;
      });
      const sql = (text: string) =>
        selectFrom<{ n: number | string }>(parksDb, { sqlite: text }).map((r) => Number(r.n))[0]!;
      for (let i = 0; i < PARK_ITERATIONS[backend]; i++) {
        const running = startProcess("node", "engine-process.ts", { ...env, SESSION_PREFIX: `park_${i}_` });
        await running.waitFor("idled");
        await killPoint(KILL_WINDOWS[i % KILL_WINDOWS.length]!, `park_${i}_`);
        running.child.kill("SIGKILL");
        await running.exited;
        at.parked += sql("SELECT count(*) AS n FROM parks WHERE state = 'parked'");
        // Woken, and its continuation not yet seen by the host: the look owed, a countdown armed, or a prompt pending.
        const woken = selectFrom<{ session_id: string }>(parksDb, {
          sqlite: "SELECT session_id FROM parks WHERE state = 'woke'",
        });
        at.woken += woken.filter((p) => !server.prompts.some((d) => d.sessionId === p.session_id)).length;
      }
      const last = startProcess("node", "engine-process.ts", { ...env, SESSIONS: "0" });
      await last.waitFor("done", 60_000);
      await last.exited;

      const parks = checkParks(parksDb, server.prompts, "park_");
      const rows = checkInvariants(
        parksDb,
        server.prompts.filter((p) => p.sessionId.startsWith("park_")),
      );
      console.log(
        `crash test around parks (${backend}): ${PARK_ITERATIONS[backend]} SIGKILLs; at the restarts: ${at.parked} parks ` +
          `held, ${at.woken} woken and not yet continued; in all: ${JSON.stringify(parks.counts)}, ${JSON.stringify(rows.counts)}`,
      );
      expect(parks.violations).toEqual([]);
      expect(rows.violations).toEqual([]);
      expect(parks.counts.woke).toBeGreaterThan(PARK_ITERATIONS[backend]);
      // The kills landed where the wakes could be lost: while parks held, and between a wake and its continuation.
      expect(at.parked).toBeGreaterThan(0);
      expect(at.woken).toBeGreaterThan(0);
    },
  );

  it(
    `runs a finished list's check to its end, once for the work, when killed during it (${CHECK_ITERATIONS[backend]} SIGKILLs)`,
    { timeout: 300_000 },
    async () => {
      const checksDb = backend === "PostgreSQL" ? await freshDatabase("crash_checks") : join(folder, "checks.db");
      const project = tempFolder("tc-crash-checks-");
      // Each run says it started (a line in a file of the project), runs a second, and passes.
      const startedFile = join(project, "started.txt");
      const linesIn = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").length - 1 : 0);
      const env = {
        DB: checksDb,
        HOST_URL: url,
        SESSIONS: "4",
        SESSION_PREFIX: "check_",
        IDLE_MODE: "once",
        STAY_MS: "60000",
        LEASE_MS: "1500",
        DIRECTORY: project,
        VERIFY_COMMAND: 'echo "$TODO_CONTINUATION_SESSION_ID" >> started.txt; sleep 1',
      };
      // Each session had its continuations and its list is finished: what is left is the check.
      const seed = await openStore(checksDb, { kind: "service" });
      for (let i = 0; i < 4; i++)
        await seed.change(
          changeSession({ sessionId: `check_${i}`, directory: project }, Date.now(), { continuations: 1 }),
        );
      await seed.close();
      const todos = server.todos;
      server.todos = todos.map((t) => ({ ...t, status: "completed" }));
      onTestFinished(() => {
        server.todos = todos;
      });
      let runningAtKill = 0;
      for (let i = 0; i < CHECK_ITERATIONS[backend]; i++) {
        const running = startProcess("node", "engine-process.ts", env);
        await running.waitFor("idled");
        // Killed during its checks: once one more has started (a line more in the file), within its first 300 ms.
        const before = linesIn(startedFile);
        await waitFor("a check to start", () => linesIn(startedFile) > before, { timeoutMs: 20_000, interval: 10 });
        await sleep(Math.random() * 300);
        running.child.kill("SIGKILL");
        await running.exited;
        runningAtKill += selectFrom(checksDb, {
          sqlite: "SELECT id FROM verifications WHERE state = 'running'",
        }).length;
      }
      const last = startProcess("node", "engine-process.ts", { ...env, STAY_MS: "0" });
      await last.waitFor("done", 60_000);
      await last.exited;

      const report = checkChecks(checksDb, "check_");
      const started = readFileSync(startedFile, "utf8").trim().split("\n");
      console.log(
        `crash test around checks (${backend}): ${CHECK_ITERATIONS[backend]} SIGKILLs; ${runningAtKill} checks running ` +
          `at a kill; ${started.length} runs started; in all: ${JSON.stringify(report.counts)}`,
      );
      expect(report.violations).toEqual([]);
      // The kills landed during checks, and each interrupted one ran again.
      expect(runningAtKill).toBeGreaterThan(0);
      expect(report.counts.interrupted).toBeGreaterThan(0);
      // A run the database started is a run the command started: never two for one row.
      expect(started.length).toBeLessThanOrEqual(report.counts.runs!);
      // Nothing was sent: a finished list that passes its check is done.
      expect(server.prompts.filter((p) => p.sessionId.startsWith("check_"))).toEqual([]);
    },
  );
});
