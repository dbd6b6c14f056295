// Every test file runs with the person's own folders out of reach (isolated-home.ts, a setup file): a test that read
// ~/.local/share/opencode/todo-continuation.db failed for anyone who had used the plugin.
import { homedir, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultDatabasePath } from "../../src/store/open/default-path.js";

const FOLDERS = ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"] as const;
const inside = (folder: string, path: string) => !relative(folder, path).startsWith("..");

describe("the folders a test may read and write", () => {
  it.each(FOLDERS)("%s points into the run's temporary folder", (name) => {
    const value = process.env[name];
    expect(value, `${name} is not set: a test would use the person's own folder`).toBeTruthy();
    expect(inside(tmpdir(), value!)).toBe(true);
  });

  it("the database's default path is not the person's", () => {
    const path = defaultDatabasePath();
    expect(inside(tmpdir(), path)).toBe(true);
    expect(path).not.toBe(join(homedir(), ".local", "share", "opencode", "todo-continuation.db"));
  });
});
