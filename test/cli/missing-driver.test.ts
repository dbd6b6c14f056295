// better-sqlite3 missing or unloadable, as after a failed native build that npm dropped without a word: every Node entry
// point that needs it (the CLI's commands, doctor, the demo) says so in one message with the command that brings it
// back, and exits 1, never with a bare module-not-found stack. A resolve hook hides or breaks the driver for the one
// process under test; the shared node_modules stays as it is.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../crash/processes.js";
import { cli, requireBuiltCli } from "../support/cli.js";
import { tempFolder } from "../support/temp-folders.js";

const exec = promisify(execFile);

/** A resolve hook (on the loader's thread) that sends `better-sqlite3` wherever `target` says. */
function hiding(target: string): string {
  const hooks = `export async function resolve(specifier, context, next) {
  if (specifier !== "better-sqlite3") return next(specifier, context);
  ${target}
}`;
  const register = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  return `--import=data:text/javascript,${encodeURIComponent(register)}`;
}

/** As if npm had removed it: Node's own resolver answers for a package that is not there. */
const NOT_INSTALLED = hiding(`return next("better-sqlite3-removed-by-npm", context);`);
/** As if its build had been skipped: the package loads, its native part does not (better-sqlite3's own words). */
const BROKEN_MODULE = `export default class { constructor() { throw new Error("Could not locate the bindings file. Tried:\\n → build/Release/better_sqlite3.node"); } }`;
const NOT_BUILT = hiding(
  `return { url: ${JSON.stringify(`data:text/javascript,${encodeURIComponent(BROKEN_MODULE)}`)}, shortCircuit: true };`,
);

const NOT_INSTALLED_SAYS = "better-sqlite3, the SQLite driver under Node, is not installed";
const REINSTALL = `run in ${ROOT}: npm install --foreground-scripts`;

let folder: string;

beforeAll(async () => {
  requireBuiltCli();
  folder = tempFolder("tc-cli-driver-");
  const migrated = await cli(["--db", join(folder, "tc.db"), "migrate"]);
  expect(migrated.code, migrated.stderr).toBe(0);
});

function expectOneClearMessage(stderr: string, says: string, command: string) {
  expect(stderr).toContain(says);
  expect(stderr).toContain(command);
  // One message, not a stack: no "at file:///…" frames and not Node's bare error code.
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toContain("ERR_MODULE_NOT_FOUND");
}

describe("the CLI without its SQLite driver", () => {
  it("a command on a SQLite file names what is missing and the command that installs it, exit 1", async () => {
    const run = await cli(["--db", join(folder, "tc.db"), "status"], { NODE_OPTIONS: NOT_INSTALLED });
    expect(run.code).toBe(1);
    expectOneClearMessage(run.stderr, NOT_INSTALLED_SAYS, REINSTALL);
    expect(run.stderr).toContain("its native build fails");
  });

  it("doctor says it before the plugin has written any file", async () => {
    const run = await cli(["--db", join(folder, "none-yet.db"), "doctor"], { NODE_OPTIONS: NOT_INSTALLED });
    expect(run.code).toBe(1);
    expectOneClearMessage(run.stderr, NOT_INSTALLED_SAYS, REINSTALL);
  });

  it("a driver whose native part does not load is rebuilt where it is", async () => {
    const run = await cli(["--db", join(folder, "tc.db"), "migrate"], { NODE_OPTIONS: NOT_BUILT });
    expect(run.code).toBe(1);
    expectOneClearMessage(
      run.stderr,
      "its native part does not load (Could not locate the bindings file. Tried:)",
      `run in ${ROOT}: npm rebuild better-sqlite3 --foreground-scripts`,
    );
  });

  it("the same commands work with the driver in place", async () => {
    const run = await cli(["--db", join(folder, "tc.db"), "status"]);
    expect(run.code, run.stderr).toBe(0);
  });
});

describe("the demo without its SQLite driver", () => {
  it("stops before starting OpenCode, with the same message, exit 1", async () => {
    const run = await exec(process.execPath, ["--import", "tsx", NOT_INSTALLED, join("scripts", "demo.ts")], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: "" },
    }).then(
      () => ({ code: 0, stdout: "", stderr: "" }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(run.code).toBe(1);
    expectOneClearMessage(run.stderr, `npm run demo: ${NOT_INSTALLED_SAYS}`, REINSTALL);
    expect(run.stdout).not.toContain("starting opencode serve");
  });
});
