// The plugin's database broken in every way a file can break, inside a real OpenCode: the plugin says so in one
// clear line of OpenCode's log, never throws into a hook, and OpenCode keeps working (with in-memory enforcement when
// the file cannot even be opened; paused, then resumed, when it breaks under a running plugin). The CLI reports
// each case clearly too.
import Database from "better-sqlite3";
import { execFile, execFileSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT } from "../crash/processes.js";
import { tempFolder } from "../support/temp-folders.js";
import { openSqlite } from "../../src/store/sqlite/open.js";
import { E2E, sleep } from "./support/harness.js";
import { Tmpfs } from "./support/tmpfs.js";
import { script } from "./scenarios.js";

const exec = promisify(execFile);
/** `storeProbeMs` of the locked-file test. */
const PROBE_MS = 1000;
let world: E2E | undefined;
let disk: Tmpfs | undefined;
const folders: string[] = [];

afterEach(async () => {
  await world?.stop();
  world = undefined;
  disk?.dispose();
  disk = undefined;
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

type CliRun = { code: number; stderr: string; stdout: string };

function cli(...args: string[]): Promise<CliRun> {
  return runCli(args, {});
}

/** The CLI run as `user`: what file permissions stop for them, they stop for it. */
function cliAs(user: { uid: number; gid: number }, ...args: string[]): Promise<CliRun> {
  return runCli(args, user);
}

async function runCli(args: string[], user: { uid?: number; gid?: number }): Promise<CliRun> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [join(ROOT, "dist", "cli", "main.js"), ...args], user);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** The plugin's own log lines about its database. */
function databaseLines(w: E2E): string[] {
  return w.server
    .output()
    .split("\n")
    .filter((l) => /todo-continuation(: cannot open| paused| resumed)/.test(l));
}

async function startWith(databasePath: string, options: Record<string, unknown> = {}): Promise<E2E> {
  world = new E2E(script, { databasePath, ...options });
  await world.start();
  return world;
}

/** A session whose model stops with open todos, then finishes them when reminded. */
async function runBasic(w: E2E, name = "basic"): Promise<string> {
  const id = await w.session(name);
  await w.prompt(id, `scenario: ${name}`);
  await w.waitFor("the model's turn", () => w.requestsFor(name).length >= 2, 20_000);
  return id;
}

describe("a database that cannot be opened: one error, in-memory enforcement, OpenCode unharmed", () => {
  it.each([
    ["a read-only file", "read-only"],
    ["a read-only folder", "read-only|cannot create"],
    ["a file of garbage bytes", "not a valid SQLite database"],
    ["a truncated file", "not a valid SQLite database|malformed|damaged"],
  ])("%s", async (kind, expected) => {
    disk = new Tmpfs(4096);
    const dir = join(disk.path, "data");
    const db = join(dir, "todo-continuation.db");
    if (kind === "a read-only file") {
      (await openSqlite(db)).close();
      disk.readonly();
    } else if (kind === "a read-only folder") {
      disk.readonly();
    } else if (kind === "a file of garbage bytes") {
      (await openSqlite(db)).close();
      writeFileSync(db, Buffer.alloc(200_000, 0x42));
    } else {
      const store = await openSqlite(db);
      store.raw.exec("BEGIN");
      for (let i = 0; i < 3000; i++)
        store.raw.run("INSERT INTO audit_events (at, event, detail) VALUES (?, 'skipped', ?)", i, "x".repeat(100));
      store.raw.exec("COMMIT");
      store.raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      store.close();
      truncateSync(db, 8192);
    }
    const w = await startWith(db, { countdownSeconds: 1 });
    const id = await runBasic(w);
    // In-memory enforcement still continues the session.
    await w.waitFor("the continuation", () => w.continuationRequests("basic").length === 1, 20_000);
    const lines = databaseLines(w);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(expected));
    expect(lines[0]).toContain("Continuing with an in-memory database");
    expect(await w.todos(id)).toHaveLength(3);
    const doctor = await cli("--db", db, "doctor");
    const stop = await cli("--db", db, "stop", "ses_x");
    expect([doctor.code, stop.code]).toContain(1);
    expect(`${doctor.stderr}${stop.stderr}`).toMatch(
      /read-only|no database|not a valid SQLite database|damaged|malformed|cannot create/,
    );
  });
});

/** The unprivileged user OpenCode runs as in the permission cases: for root, a file's permissions stop no write. */
function unprivilegedUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync("id", [flag, "nobody"], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

describe("a database its user may not write (file permissions, OpenCode running as an unprivileged user)", () => {
  it.each([
    ["a read-only file", /attempt to write a readonly database|read-only|readonly/],
    ["a read-only folder", /unable to open|cannot create|permission denied|read-only|readonly/i],
  ])(
    "%s",
    async (kind, expected) => {
      const user = unprivilegedUser();
      const dir = mkdtempSync(join(tmpdir(), "tc-perm-"));
      folders.push(dir);
      const db = join(dir, "todo-continuation.db");
      if (kind === "a read-only file") {
        // root's file, readable by all; the folder is the user's, so only the file's permission stands in the way.
        (await openSqlite(db)).close();
        chmodSync(db, 0o444);
        chownSync(dir, user.uid, user.gid);
      } else {
        // root's folder, which others may enter but not write in.
        chmodSync(dir, 0o555);
      }
      const before = kind === "a read-only file" ? readFileSync(db) : undefined;
      world = new E2E(script, { databasePath: db, countdownSeconds: 1 }, { user });
      await world.start();
      // The process under test is really the unprivileged user's (spawning fails, rather than run as root, if not).
      expect(statSync(`/proc/${world.server.pid}`).uid).toBe(user.uid);
      const id = await runBasic(world);
      await world.waitFor("the continuation", () => world!.continuationRequests("basic").length === 1, 20_000);
      const lines = databaseLines(world);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(expected);
      expect(lines[0]).toContain("Continuing with an in-memory database");
      expect(await world.todos(id)).toHaveLength(3);
      if (before) expect(readFileSync(db).equals(before)).toBe(true);
      else expect(readdirSync(dir)).toEqual([]);
      const stop = await cliAs(user, "--db", db, "stop", "ses_x");
      expect(stop.code).toBe(1);
      expect(stop.stderr).toMatch(expected);
    },
    60_000,
  );
});

describe("a database that breaks under a running plugin: one error, paused, OpenCode unharmed, resumed when it works", () => {
  it("locked by another process for longer than the busy timeout", async () => {
    const w = await startWith(join(await tmpDir(), "state.db"), { countdownSeconds: 1, storeProbeMs: PROBE_MS });
    await runBasic(w, "stagnation");
    await w.waitForAudit(await firstSession(w), "armed");
    const locker = new Database(w.dbPath);
    locker.exec("BEGIN EXCLUSIVE");
    const started = Date.now();
    await w.waitFor("the pause", () => databaseLines(w).some((l) => l.includes("paused")), 20_000);
    // OpenCode answers while the file is locked.
    const ping = Date.now();
    await w.server.client.session.list({ throwOnError: true });
    expect(Date.now() - ping).toBeLessThan(1500);
    // The lock is held across three probes (no probe is visible from outside): the plugin must stay paused through
    // failed probes, and say so once, not just until its first probe. A cause of the scenario, not a wait for an outcome.
    await sleep(3 * PROBE_MS);
    locker.exec("ROLLBACK");
    locker.close();
    await w.waitFor("the resume", () => databaseLines(w).some((l) => l.includes("resumed")), 20_000);
    const lines = databaseLines(w);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/paused: the database .* is locked by another process/);
    console.log(`locked: paused ${Date.now() - started} ms after the lock, resumed after release`);
    // Working again: the stagnation scenario runs to its end.
    await w.waitForAudit(await firstSession(w), "skipped:stagnation", 60_000);
  });

  it("a disk that fills up", async () => {
    disk = new Tmpfs(1024);
    const w = await startWith(join(disk.path, "state.db"), { countdownSeconds: 1, storeProbeMs: 1000 });
    const first = await runBasic(w);
    await w.waitForAudit(first, "skipped:todos_complete", 20_000);
    const ballast = disk.fill();
    await runBasic(w, "stagnation");
    await w.waitFor("the pause", () => databaseLines(w).some((l) => l.includes("paused")), 30_000);
    expect(databaseLines(w)[0]).toMatch(/paused: the database .* cannot grow \(the disk is full\)/);
    const cliStop = await cli("--db", w.dbPath, "stop", "ses_x");
    expect(cliStop.code).toBe(1);
    expect(cliStop.stderr).toMatch(/full/);
    rmSync(ballast);
    await w.waitFor("the resume", () => databaseLines(w).some((l) => l.includes("resumed")), 20_000);
    expect(databaseLines(w)).toHaveLength(2);
  });

  it("deleted while OpenCode has it open", async () => {
    const dir = await tmpDir();
    const w = await startWith(join(dir, "state.db"), { countdownSeconds: 1, leaseMs: 1500 });
    const first = await runBasic(w);
    await w.waitForAudit(first, "skipped:todos_complete", 20_000);
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${w.dbPath}${suffix}`, { force: true });
    await w.waitFor("the pause", () => databaseLines(w).some((l) => l.includes("paused")), 10_000);
    expect(databaseLines(w)).toEqual([expect.stringMatching(/was deleted or replaced while this process had it open/)]);
    const id = await runBasic(w, "stagnation");
    // Paused for good (its one line says a restart is needed), the enforcer decides nothing until then: the last
    // thing it could act on is the turn's idle, so the wait ends when OpenCode reports the session idle.
    await w.waitFor("the turn to end", () => w.sessionIdle(id));
    expect(w.continuationRequests("stagnation")).toEqual([]);
    expect(await w.todos(id)).toHaveLength(3);
    expect(databaseLines(w)).toHaveLength(1);
    const doctor = await cli("--db", w.dbPath, "doctor");
    expect(doctor.code).toBe(1);
    expect(doctor.stderr).toContain("no database at");
  });
});

async function tmpDir(): Promise<string> {
  return tempFolder("tc-broken-");
}

async function firstSession(w: E2E): Promise<string> {
  const list = await w.server.client.session.list({ throwOnError: true });
  return (list.data as Array<{ id: string; title: string }>).find((s) => s.title === "stagnation")!.id;
}
