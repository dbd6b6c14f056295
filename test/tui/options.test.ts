// The TUI finds the database where the server plugin does: the same `~`, the same base for a relative path, the
// same refusal of a URL it cannot use.
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/resolve.js";
import { resolveTuiOptions } from "../../src/tui/options.js";

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
