// The TUI finds the database where the server plugin does: the same `~`, the same base for a relative path, the
// same refusal of a URL it cannot use.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/resolve.js";
import { resolveTuiOptions, somethingToCheck } from "../../src/tui/options.js";
import { tempFolder } from "../support/temp-folders.js";

const env = { HOME: "/home/u" };

describe("the TUI's databasePath", () => {
  it.each([
    ["~/todo.db", "/home/u/todo.db"],
    ["state/todo.db", "/work/project/state/todo.db"],
    ["postgres://u:pw@db.local/todo", "postgres://u:pw@db.local/todo"],
  ])("%s → %s, from the option and from TODO_CONTINUATION_DB", (given, expected) => {
    expect(resolveTuiOptions({ databasePath: given }, env, "/work/project").databasePath).toBe(expected);
    expect(resolveTuiOptions({}, { ...env, TODO_CONTINUATION_DB: given }, "/work/project").databasePath).toBe(expected);
  });

  it("refuses another database's URL without showing its password", () => {
    let error: unknown;
    try {
      resolveTuiOptions({ databasePath: "mysql://u:s3cret@host/x" }, env, "/work/project");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/databasePath = "mysql:\/\/u:\*\*\*@host\/x"; allowed: a file path/);
    expect((error as Error).message).not.toContain("s3cret");
  });
});

describe("whether the TUI has settings to check (zod is loaded ahead only then)", () => {
  const home = () => {
    const folder = tempFolder("tc-tui-check-");
    return { project: join(folder, "project"), env: { XDG_CONFIG_HOME: join(folder, "config") } };
  };

  it("no options and no file: nothing to check", () => {
    const { project, env } = home();
    expect(somethingToCheck(undefined, project, env)).toBe(false);
    expect(somethingToCheck({}, project, env)).toBe(false);
  });

  it("options in tui.json, or a file of the project or the user: something to check", () => {
    const { project, env } = home();
    expect(somethingToCheck({ cancelKey: "ctrl+y" }, project, env)).toBe(true);
    mkdirSync(join(project, ".opencode"), { recursive: true });
    writeFileSync(join(project, ".opencode", "todo-continuation.jsonc"), "{}");
    expect(somethingToCheck({}, project, env)).toBe(true);
    const other = home();
    mkdirSync(join(other.env.XDG_CONFIG_HOME, "opencode"), { recursive: true });
    writeFileSync(join(other.env.XDG_CONFIG_HOME, "opencode", "todo-continuation.json"), "{}");
    expect(somethingToCheck({}, other.project, other.env)).toBe(true);
  });
});
