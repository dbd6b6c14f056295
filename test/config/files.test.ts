// The configuration files on disk: found in the user's OpenCode folder and the project's .opencode/, read as JSONC,
// ranked below the plugin options and the environment, each value's source kept; every problem named with its file.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseJsonc } from "../../src/config/jsonc.js";
import { resolveConfiguration } from "../../src/config/resolve.js";
import { tempFolder } from "../support/temp-folders.js";

interface Machine {
  env: NodeJS.ProcessEnv;
  project: string;
  user(name: string, text: string): string;
  projectFile(name: string, text: string): string;
}

function machine(): Machine {
  const home = tempFolder("home-");
  const project = join(home, "project");
  mkdirSync(join(project, ".opencode"), { recursive: true });
  mkdirSync(join(home, ".config", "opencode"), { recursive: true });
  const write = (folder: string, name: string, text: string) => {
    const path = join(folder, name);
    writeFileSync(path, text);
    return path;
  };
  return {
    env: { HOME: home, XDG_DATA_HOME: join(home, "data") },
    project,
    user: (name, text) => write(join(home, ".config", "opencode"), name, text),
    projectFile: (name, text) => write(join(project, ".opencode"), name, text),
  };
}

const read = (m: Machine, options: unknown = {}, env: NodeJS.ProcessEnv = {}) =>
  resolveConfiguration({ options, env: { ...m.env, ...env }, directory: m.project, files: true });

describe("JSONC", () => {
  it("takes comments and trailing commas, and leaves strings that look like them alone", () => {
    expect(
      parseJsonc(`{
        // a line comment
        "prompt": "see http://x // not a comment, /* nor this */",
        /* a block
           comment */ "skipAgents": ["plan", "review",],
      }`),
    ).toEqual({ prompt: "see http://x // not a comment, /* nor this */", skipAgents: ["plan", "review"] });
  });

  it("says where a syntax error is, in the file as written", () => {
    expect(() => parseJsonc(`{\n  // fine\n  "countdownSeconds": 3\n  "toast": false\n}`)).toThrow(
      /^line 4, column 3: /,
    );
  });
});

describe("configuration files", () => {
  it("rank: environment over plugin options over the project's file over the user's file over defaults", () => {
    const m = machine();
    const user = m.user("todo-continuation.json", '{ "countdownSeconds": 9, "maxContinuations": 7, "toast": false }');
    const project = m.projectFile("todo-continuation.jsonc", '{ "countdownSeconds": 5, "maxContinuations": 6 }');
    const { config, sources, files } = read(m, { maxContinuations: 4 }, { TODO_CONTINUATION_COUNTDOWN_SECONDS: "1" });
    expect(files).toEqual([user, project]);
    expect(config).toMatchObject({ countdownSeconds: 1, maxContinuations: 4, toast: false, stagnationLimit: 3 });
    expect(sources).toMatchObject({
      countdownSeconds: "TODO_CONTINUATION_COUNTDOWN_SECONDS",
      maxContinuations: "plugin options",
      toast: user,
      stagnationLimit: "default",
    });
    expect(read(m).sources.countdownSeconds).toBe(project);
  });

  it("resolve a relative databasePath against the project, and carry the TUI's options under tui", () => {
    const m = machine();
    const path = m.projectFile(
      "todo-continuation.json",
      '{ "databasePath": "state/todo.db", "tui": { "cancelKey": "ctrl+y" } }',
    );
    const resolution = read(m);
    expect(resolution.config?.databasePath).toBe(join(m.project, "state", "todo.db"));
    expect(resolution.tui).toEqual({ cancelKey: { value: "ctrl+y", source: path } });
  });

  it("read the .jsonc of a folder and name the .json beside it as ignored", () => {
    const m = machine();
    m.user("todo-continuation.jsonc", '{ "countdownSeconds": 4 }');
    const ignored = m.user("todo-continuation.json", '{ "countdownSeconds": 8 }');
    const { config, warnings } = read(m);
    expect(config?.countdownSeconds).toBe(4);
    expect(warnings).toEqual([expect.stringContaining(`${ignored} is ignored`)]);
  });

  it("name every problem of every source at once, each with its file, the value and what is allowed", () => {
    const m = machine();
    const user = m.user("todo-continuation.json", '{ "countdownSecs": 3 }');
    const project = m.projectFile(
      "todo-continuation.jsonc",
      '{ "maxContinuations": "many", "tui": { "cancelKey": 5 } }',
    );
    const { config, problems } = read(m, { stagnationLimit: 0 }, { TODO_CONTINUATION_ENABLED: "perhaps" });
    expect(config).toBeUndefined();
    expect(problems.map((p) => p.text)).toEqual([
      `in ${user}: countdownSecs = 3; allowed: a known option (did you mean countdownSeconds?)`,
      `in ${project}: maxContinuations = "many"; allowed: an integer from 1 to 100000`,
      `in ${project}: tui.cancelKey = 5; allowed: an OpenCode key such as "escape", "ctrl+y" or "<leader>k"`,
      "stagnationLimit = 0; allowed: an integer from 1 to 1000",
      'TODO_CONTINUATION_ENABLED = "perhaps"; allowed: true or false',
    ]);
  });

  it("refuse a string where a number or true/false is meant, which only an environment variable may give", () => {
    const m = machine();
    const project = m.projectFile("todo-continuation.jsonc", '{ "toast": "yes", "countdownSeconds": "5" }');
    const { config, problems } = read(m, { enabled: "on", maxContinuations: "7" });
    expect(config).toBeUndefined();
    expect(problems.map((p) => p.text)).toEqual([
      `in ${project}: toast = "yes"; allowed: true or false`,
      `in ${project}: countdownSeconds = "5"; allowed: a number from 0 to 3600`,
      'enabled = "on"; allowed: true or false',
      'maxContinuations = "7"; allowed: an integer from 1 to 100000',
    ]);
    const fromEnvironment = read(m, {}, { TODO_CONTINUATION_ENABLED: "off", TODO_CONTINUATION_COUNTDOWN_SECONDS: "5" });
    expect(fromEnvironment.merged).toMatchObject({ enabled: false, countdownSeconds: 5 });
    // The file is still wrong: a variable that wins over a value does not make the value right.
    expect(fromEnvironment.problems.map((p) => p.key)).toEqual(["toast", "countdownSeconds"]);
  });

  it("say what is wrong with a file that is not JSON, or not an object", () => {
    const m = machine();
    const user = m.user("todo-continuation.json", '{ "countdownSeconds": 3,, }');
    const project = m.projectFile("todo-continuation.json", "[1, 2]");
    const texts = read(m).problems.map((p) => p.text);
    expect(texts[0]).toMatch(new RegExp(`^${user} is not valid JSON: line 1, column \\d+: `));
    expect(texts[1]).toBe(
      `${project} is not an object of options: the file holds one object, such as { "countdownSeconds": 3 }`,
    );
  });

  it("name the file of a contradiction between two values", () => {
    const m = machine();
    const project = m.projectFile("todo-continuation.json", '{ "retryBaseMs": 90000 }');
    expect(read(m).problems.map((p) => p.text)).toEqual([
      `in ${project}: retryBaseMs = 90000; allowed: at most retryMaxMs (60000)`,
    ]);
  });

  it("are not read when the caller leaves them out", () => {
    const m = machine();
    m.projectFile("todo-continuation.json", '{ "countdownSecs": 3 }');
    const resolution = resolveConfiguration({ env: m.env, directory: m.project });
    expect(resolution.problems).toEqual([]);
    expect(resolution.files).toEqual([]);
  });
});
