// The plugin itself, in OpenCode's Bun, hosted as OpenCode hosts it against the simulated OpenCode
// (support/sim-plugin-world.ts): what it does when OpenCode is killed and started again, and when its database fails
// under it, on SQLite (bun:sqlite) and on PostgreSQL (Bun's SQL client). These cases read nothing of OpenCode beyond
// what the simulated one answers as the real one does (test/e2e/sim-opencode.test.ts): their proof is the plugin's
// clock, its rows and its log, where a real `opencode serve` would add only its start-up and first-prompt CPU. Each
// keeps the name and assertions it had on a real OpenCode (restart.test.ts, postgres.test.ts,
// broken-database.test.ts); a continuation the model received is counted here as a prompt the server took.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PostgresServer } from "../support/postgres.js";
import { tempFolder } from "../support/temp-folders.js";
import { sleep } from "../support/wait-for.js";
import { brokenFile, cli, databaseLines, expectOpenedInMemory, runBasic } from "./support/broken-database.js";
import { SimPluginWorld } from "./support/sim-plugin-world.js";

let world: SimPluginWorld | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

describe("restarts of OpenCode", () => {
  it("a countdown interrupted by SIGKILL resumes after the restart and the continuation arrives once", async () => {
    world = new SimPluginWorld({ countdownSeconds: 8 });
    await world.start();
    const id = await world.session("restart");
    await world.prompt(id, "scenario: restart");
    const armed = await world.waitForAudit(id, "armed");
    // Killed 1.5 s into the 8 s countdown (by its armed row's time): where the scenario crashes, not a wait for an outcome.
    await sleep(Math.max(0, armed.at + 1500 - Date.now()));
    const killedAt = Date.now();
    await world.crashServer();
    expect(world.countdowns(id)).toMatchObject([{ state: "armed" }]);
    await world.startServer();
    const resumed = await world.waitForAudit(id, "resumed:restart");
    const remaining = resumed.detail.remainingMs as number;
    expect(remaining).toBeGreaterThan(0);
    expect(remaining).toBeLessThanOrEqual(8000 - (killedAt - armed.at));
    const injected = await world.waitForAudit(id, "injected", 20_000);
    expect(injected.at - armed.at).toBeGreaterThanOrEqual(8000);
    expect(await world.trailAtRest(id, "skipped:todos_complete", 15_000)).toEqual([
      "armed",
      "resumed:restart",
      "fired",
      "injected",
      "skipped:todos_complete",
    ]);
    expect(world.continuationsOf(id)).toBe(1);
    expect(world.injections(id)).toMatchObject([{ status: "sent" }]);
    expect(world.trail(id)).toEqual(["armed", "resumed:restart", "fired", "injected", "skipped:todos_complete"]);
    console.log(
      `e2e restart: killed ${killedAt - armed.at} ms into an 8 s countdown, resumed ${resumed.at - killedAt} ms later with ${remaining} ms left; continuation ${injected.at - armed.at} ms after arming`,
    );
  });

  it("a countdown found later than resumeWindowSeconds after the restart expires, and nothing is sent", async () => {
    world = new SimPluginWorld({ countdownSeconds: 2, resumeWindowSeconds: 1 });
    await world.start();
    const id = await world.session("expired");
    await world.prompt(id, "scenario: expired");
    const armed = await world.waitForAudit(id, "armed");
    await world.crashServer();
    // Down until the countdown's deadline (2 s) plus more than the resume window (1 s) has passed, by its armed row's
    // time: the restart must find it too late. A cause of the scenario, not a wait for an outcome.
    await sleep(Math.max(0, armed.at + 2000 + 1500 - Date.now()));
    await world.startServer();
    const expired = await world.waitForAudit(id, "expired:stale_after_restart");
    expect(expired.detail.lateMs as number).toBeGreaterThanOrEqual(1000);
    expect(await world.trailAtRest(id, "expired:stale_after_restart")).toEqual([
      "armed",
      "expired:stale_after_restart",
    ]);
    expect(world.countdowns(id)).toMatchObject([{ state: "expired", end_reason: "stale_after_restart" }]);
    expect(world.injections(id)).toEqual([]);
    expect(world.continuationsOf(id)).toBe(0);
  });
});

describe("the plugin on PostgreSQL", () => {
  let postgres: PostgresServer;
  beforeAll(async () => {
    postgres = await PostgresServer.start();
  }, 60_000);
  afterAll(async () => {
    await postgres?.destroy();
  });
  afterEach(() => {
    if (!postgres.running()) postgres.start();
  });

  it("a countdown interrupted by SIGKILL resumes after the restart and the continuation arrives once", async () => {
    const url = await postgres.createDatabase("e2e");
    world = new SimPluginWorld({ databasePath: url, countdownSeconds: 8 });
    await world.start();
    const id = await world.session("restart");
    await world.prompt(id, "scenario: restart");
    const armed = await world.waitForAudit(id, "armed");
    // Killed 1.5 s into the 8 s countdown (by its armed row's time): where the scenario crashes, not a wait for an outcome.
    await sleep(Math.max(0, armed.at + 1500 - Date.now()));
    await world.crashServer();
    expect(world.countdowns(id)).toMatchObject([{ state: "armed" }]);
    await world.startServer();
    // The old process's heartbeat is still fresh, but its pid on this host is gone: taken over at once.
    await world.waitForAudit(id, "resumed:restart");
    await world.waitForAudit(id, "injected", 20_000);
    await world.trailAtRest(id, "skipped:todos_complete", 15_000);
    expect(world.continuationsOf(id)).toBe(1);
    expect(world.trail(id)).toEqual(["armed", "resumed:restart", "fired", "injected", "skipped:todos_complete"]);
  });

  it("PostgreSQL stopped mid-countdown: OpenCode keeps answering, the plugin pauses with one log line, and continues once the server is back", async () => {
    const url = await postgres.createDatabase("e2e");
    world = new SimPluginWorld({ databasePath: url, countdownSeconds: 4, storeProbeMs: 500 });
    await world.start();
    const w = world;
    const id = await w.session("restart");
    await w.prompt(id, "scenario: restart");
    await w.waitForAudit(id, "armed");
    const deadlineAt = Number(w.countdowns(id)[0]!.deadline_at);
    postgres.stop("fast");
    const stoppedAt = Date.now();
    // OpenCode itself is not held up by the plugin while its database is gone.
    const started = Date.now();
    await w.client.session.list({ throwOnError: true });
    const listMs = Date.now() - started;
    await w.waitFor("the plugin's pause line", () => w.logLines().some((l) => /todo-continuation paused/.test(l)));
    // The server stays down until 2 s past the countdown's deadline (by its row): the countdown must come due while
    // the plugin cannot claim it. That is the scenario's cause, not a wait for an outcome: the trail below, `fired`
    // after `resumed:store_recovered` and after the server is back, is what shows that nothing went out meanwhile.
    await sleep(Math.max(0, deadlineAt + 2000 - Date.now()));
    expect(w.continuationsOf(id)).toBe(0);
    const paused = w.logLines().filter((l) => /todo-continuation paused/.test(l));
    expect(paused).toHaveLength(1);
    const backAt = Date.now();
    postgres.start();
    await w.waitForAudit(id, "injected", 30_000);
    await w.trailAtRest(id, "skipped:todos_complete", 15_000);
    expect(w.audit(id).find((r) => r.event === "fired")!.at).toBeGreaterThanOrEqual(backAt);
    expect(w.continuationsOf(id)).toBe(1);
    expect(w.logLines().join("\n")).toMatch(/todo-continuation resumed: the database postgres:\/\/[^ ]+ works again/);
    // The countdown it still owned is taken up again when the database answers: fired late, once.
    expect(w.trail(id)).toEqual(["armed", "resumed:store_recovered", "fired", "injected", "skipped:todos_complete"]);
    console.log(
      `sim postgres outage: session.list answered in ${listMs} ms while the server was down; ${paused.length} pause line(s); down for ${Date.now() - stoppedAt} ms in all`,
    );
  });
});

describe("a database that cannot be opened: one error, in-memory enforcement, OpenCode unharmed", () => {
  it("a truncated file", async () => {
    const db = await brokenFile("a truncated file");
    // Three todos, as the real world's scenario leaves: its session is read back with them.
    world = new SimPluginWorld({ databasePath: db, countdownSeconds: 1 }, { todos: 3 });
    await world.start();
    await expectOpenedInMemory(world, db, "not a valid SQLite database|malformed|damaged");
  });
});

describe("a database that breaks under a running plugin: one error, paused, OpenCode unharmed, resumed when it works", () => {
  it("deleted while OpenCode has it open", async () => {
    const dbPath = join(await tempFolder("tc-broken-"), "state.db");
    world = new SimPluginWorld({ databasePath: dbPath, countdownSeconds: 1, leaseMs: 1500 }, { todos: 3 });
    await world.start();
    const w = world;
    const first = await runBasic(w);
    await w.waitForAudit(first, "skipped:todos_complete", 20_000);
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${w.dbPath}${suffix}`, { force: true });
    await w.waitFor("the pause", () => databaseLines(w).some((l) => l.includes("paused")), 10_000);
    expect(databaseLines(w)).toEqual([expect.stringMatching(/was deleted or replaced while this process had it open/)]);
    const id = await runBasic(w, "stagnation");
    // Paused for good (its one line says a restart is needed), the enforcer decides nothing until then: the last
    // thing it could act on is the turn's idle, so the wait ends when OpenCode reports the session idle.
    await w.waitFor("the turn to end", () => w.sessionIdle(id));
    expect(w.continuationsOf(id)).toBe(0);
    expect(await w.todos(id)).toHaveLength(3);
    expect(databaseLines(w)).toHaveLength(1);
    const doctor = await cli("--db", w.dbPath, "doctor");
    expect(doctor.code).toBe(1);
    // doctor reports it among its findings, after what the plugin says of itself.
    expect(doctor.stdout).toContain("no database at");
  });
});
