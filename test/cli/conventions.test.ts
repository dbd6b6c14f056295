// The CLI as people expect one to behave (clig.dev): a version, every option in every help with an example, a typo
// refused with the nearest right word instead of answered with nothing, a wrong path said plainly, and one style of
// JSON keys.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandPaths } from "../../src/cli/command-list.js";
import { ROOT } from "../crash/processes.js";
import { cli, requireBuiltCli } from "../support/cli.js";
import { ev } from "../support/events.js";
import { drained, startEngine, tempFolder, type EngineFixture } from "../support/engine-fixture.js";

const S = "ses_conventions";
let f: EngineFixture;

beforeAll(async () => {
  requireBuiltCli();
  f = await startEngine({ config: { countdownSeconds: 0.05, toast: false, stagnationLimit: 1 } });
  f.host.addUserMessage(S, "go");
  f.host.setTodos(S, [["a", "pending"]]);
  for (let i = 0; i < 2; i++) {
    f.enforcer.handleEvent(ev.idle(S));
    await drained(f);
  }
}, 30_000);

afterAll(async () => {
  await f.destroy();
});

/** Every command, from the one list main.ts registers them from: a new command is held to these conventions too. */
const COMMANDS = commandPaths();

describe("help and version", () => {
  it("--version prints the package's version", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    expect(await cli(["--version"])).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it.each(COMMANDS)("%s --help lists --db and --json and shows an example", async (command) => {
    const help = await cli([...command.split(" "), "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(`Usage: todo-continuation ${command}`);
    expect(help.stdout).toMatch(/Global Options:[\s\S]*--db <path>[\s\S]*--json/);
    expect(help.stdout).toMatch(/Examples?:\n {2}\$ todo-continuation /);
  });

  it("the program's own help has examples too", async () => {
    expect((await cli(["--help"])).stdout).toMatch(/Examples:\n {2}\$ todo-continuation status/);
  });
});

describe("a session id the database has never seen", () => {
  it("stop refuses it (exit 2), says where to look and how to mean it, and records nothing", async () => {
    const typo = await cli(["--db", f.dbPath, "stop", "ses_typo"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("no session ses_typo in");
    expect(typo.stderr).toContain("`todo-continuation status`");
    expect(typo.stderr).toContain("--force");
    expect(f.rows.trail("ses_typo")).toEqual([]);
    const forced = await cli(["--db", f.dbPath, "stop", "ses_typo", "--force"]);
    expect(forced.code).toBe(0);
    expect(f.rows.trail("ses_typo")).toEqual(["stopped:cli"]);
  });

  it("resume refuses it (exit 2); a known session resumes", async () => {
    const typo = await cli(["--db", f.dbPath, "resume", "ses_unknown"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("no session ses_unknown in");
    expect((await cli(["--db", f.dbPath, "resume", S])).code).toBe(0);
  });

  it("allow refuses it (exit 2) and records nothing; a known session is allowed more", async () => {
    const typo = await cli(["--db", f.dbPath, "allow", "ses_unknown"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("no session ses_unknown in");
    expect(f.rows.trail("ses_unknown")).toEqual([]);
    expect((await cli(["--db", f.dbPath, "allow", S])).code).toBe(0);
  });
});

describe("filters that could only ever match nothing", () => {
  it("a misspelt --reason is refused with the reason it most likely meant", async () => {
    const typo = await cli(["--db", f.dbPath, "audit", "--reason", "stagnaton"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("did you mean stagnation?");
    const right = await cli(["--db", f.dbPath, "--json", "audit", "--reason", "stagnation"]);
    expect(right.code).toBe(0);
    expect(JSON.parse(right.stdout)).toMatchObject([{ session_id: S, reason: "stagnation" }]);
  });

  it("a misspelt --event is refused with the event it most likely meant", async () => {
    const typo = await cli(["--db", f.dbPath, "audit", "--event", "skiped"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("did you mean skipped?");
  });
});

describe("a --db that is no database file", () => {
  it("a folder: says it is a folder and names the file to give", async () => {
    const folder = tempFolder();
    for (const command of [["history"], ["stop", S]]) {
      const result = await cli(["--db", folder, ...command]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${folder} is a folder, not a database file`);
      expect(result.stderr).toContain(join(folder, "todo-continuation.db"));
    }
  });

  it("a path through a file: says a part of it is a file", async () => {
    const file = join(tempFolder(), "plain");
    writeFileSync(file, "x");
    const result = await cli(["--db", join(file, "state.db"), "history"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("is not a path to a file: a part of it is a file");
  });
});

/** Every key of a JSON document, at any depth, but inside audit details (data, not the CLI's own words). */
function keysOf(value: unknown, into: Array<[string, Record<string, unknown>]> = []) {
  if (Array.isArray(value)) for (const item of value) keysOf(item, into);
  else if (value && typeof value === "object")
    for (const [key, inner] of Object.entries(value)) {
      into.push([key, value as Record<string, unknown>]);
      if (key !== "detail") keysOf(inner, into);
    }
  return into;
}

describe("JSON for scripts", () => {
  it("names every key in snake_case; a camelCase key of 0.1 is printed only beside its snake_case twin", async () => {
    const runs = [
      ["history"],
      ["audit"],
      ["cost"],
      ["status"],
      ["doctor"],
      ["stop", S],
      ["resume", S],
      ["allow", S],
      ["prune", "--older-than", "30d", "--dry-run"],
    ];
    for (const args of runs) {
      const result = await cli(["--db", f.dbPath, "--json", ...args]);
      expect(result.code, args.join(" ")).toBe(0);
      for (const [key, owner] of keysOf(JSON.parse(result.stdout))) {
        if (/^[a-z0-9_]+$/.test(key)) continue;
        const twin = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
        expect(owner, `${args.join(" ")}: ${key}`).toHaveProperty(twin, owner[key]);
      }
    }
  });
});
