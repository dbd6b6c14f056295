// What the tests of a broken database share, on a real OpenCode or the simulated one: the CLI run as a process (as this
// user or another), the files broken as they break them, the plugin's own log lines about its database, and a world
// whose model stops with open todos.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { truncateSync, writeFileSync } from "node:fs";
import { promisify } from "node:util";
import { expect } from "vitest";
import { ROOT } from "../../crash/processes.js";
import { tempFolder } from "../../support/temp-folders.js";
import { openSqlite } from "../../../src/store/sqlite/open.js";
import { E2E } from "./harness.js";
import type { ApiWorld } from "./world.js";
import { script } from "../scenarios.js";

const exec = promisify(execFile);

export type CliRun = { code: number; stderr: string; stdout: string };

/** The built CLI, from `checkout` (this one by default), as `user` when given: what permissions stop for them, they stop for it. */
export async function runCli(
  args: string[],
  user: { uid?: number; gid?: number } = {},
  checkout = ROOT,
): Promise<CliRun> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [join(checkout, "dist", "cli", "main.js"), ...args], user);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

export function cli(...args: string[]): Promise<CliRun> {
  return runCli(args);
}

/** The plugin's own log lines about its database. */
export function databaseLines(w: ApiWorld): string[] {
  return w.logLines().filter((l) => /todo-continuation(: cannot open| paused| resumed)/.test(l));
}

/** A session whose model stops with open todos, then finishes them when reminded. */
export async function runBasic(w: ApiWorld, name = "basic"): Promise<string> {
  const id = await w.session(name);
  await w.prompt(id, `scenario: ${name}`);
  await w.waitFor("the model's turn", () => w.firstTurnOver(id, name), 20_000);
  return id;
}

export function worldWith(databasePath: string, options: Record<string, unknown> = {}): E2E {
  return new E2E(script, { databasePath, ...options });
}

/**
 * A database that cannot be opened: one line in OpenCode's log naming why (`expected`), enforcement in memory (the
 * session is still continued), OpenCode unharmed, and the CLI failing on the file with a clear error.
 */
export async function expectOpenedInMemory(w: ApiWorld, db: string, expected: string): Promise<void> {
  const id = await runBasic(w);
  await w.waitFor("the continuation", () => w.continuationsOf(id, "basic") === 1, 20_000);
  const lines = databaseLines(w);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(expected));
  expect(lines[0]).toContain("Continuing with an in-memory database");
  expect(await w.todos(id)).toHaveLength(3);
  const doctor = await cli("--db", db, "doctor");
  const stop = await cli("--db", db, "stop", "ses_x", "--force");
  expect([doctor.code, stop.code]).toContain(1);
  expect(`${doctor.stderr}${stop.stderr}`).toMatch(
    /read-only|no database|not a valid SQLite database|damaged|malformed|cannot create/,
  );
}

/** A database file that cannot be opened: 200 kB of garbage, or a real one cut short. */
export async function brokenFile(kind: "a file of garbage bytes" | "a truncated file"): Promise<string> {
  const db = join(await tempFolder("tc-broken-"), "data", "todo-continuation.db");
  if (kind === "a file of garbage bytes") {
    (await openSqlite(db)).close();
    writeFileSync(db, Buffer.alloc(200_000, 0x42));
    return db;
  }
  const store = await openSqlite(db);
  store.raw.exec("BEGIN");
  for (let i = 0; i < 3000; i++)
    store.raw.run("INSERT INTO audit_events (at, event, detail) VALUES (?, 'skipped', ?)", i, "x".repeat(100));
  store.raw.exec("COMMIT");
  store.raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  store.close();
  truncateSync(db, 8192);
  return db;
}
