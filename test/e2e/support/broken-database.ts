// What the tests of a broken database share: the CLI run as a process (as this user or another), the plugin's own log
// lines about its database, and a world whose model stops with open todos.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "vitest";
import { ROOT } from "../../crash/processes.js";
import { E2E } from "./harness.js";
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
export function databaseLines(w: E2E): string[] {
  return w.server
    .output()
    .split("\n")
    .filter((l) => /todo-continuation(: cannot open| paused| resumed)/.test(l));
}

/** A session whose model stops with open todos, then finishes them when reminded. */
export async function runBasic(w: E2E, name = "basic"): Promise<string> {
  const id = await w.session(name);
  await w.prompt(id, `scenario: ${name}`);
  await w.waitFor("the model's turn", () => w.requestsFor(name).length >= 2, 20_000);
  return id;
}

export function worldWith(databasePath: string, options: Record<string, unknown> = {}): E2E {
  return new E2E(script, { databasePath, ...options });
}

/**
 * A database that cannot be opened: one line in OpenCode's log naming why (`expected`), enforcement in memory (the
 * session is still continued), OpenCode unharmed, and the CLI failing on the file with a clear error.
 */
export async function expectOpenedInMemory(w: E2E, db: string, expected: string): Promise<void> {
  const id = await runBasic(w);
  await w.waitFor("the continuation", () => w.continuationRequests("basic").length === 1, 20_000);
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
