// The message for a missing better-sqlite3 names the command that fixes it where this package is: a clone, a project
// that installed it, a global install (the built CLI shows it end to end: test/cli/missing-driver.test.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { driverMissingMessage } from "../../src/store/sqlite/node-driver.js";
import { tempFolder } from "../support/temp-folders.js";

describe("driverMissingMessage", () => {
  it("in a clone: npm install in the clone, which tries the dropped build again and shows it", () => {
    const message = driverMissingMessage({ kind: "not-installed", packageRoot: "/home/me/opencode-todo-continuation" });
    expect(message).toMatch(/^better-sqlite3, the SQLite driver under Node, is not installed: npm drops/);
    expect(message).toContain("run in /home/me/opencode-todo-continuation: npm install --foreground-scripts");
    expect(message).not.toContain("npm install better-sqlite3");
  });

  it("installed in a project: npm install in that project", () => {
    const project = tempFolder("tc-driver-project-");
    writeFileSync(join(project, "package.json"), "{}");
    const packageRoot = join(project, "node_modules", "opencode-todo-continuation");
    mkdirSync(packageRoot, { recursive: true });
    expect(driverMissingMessage({ kind: "not-installed", packageRoot })).toContain(
      `run in ${project}: npm install --foreground-scripts`,
    );
  });

  it("installed globally (no project around it): install it again with the build shown", () => {
    const message = driverMissingMessage({
      kind: "not-installed",
      packageRoot: "/nonexistent-prefix/lib/node_modules/opencode-todo-continuation",
    });
    expect(message).toContain("Install opencode-todo-continuation again the way you installed it");
    expect(message).toContain("--foreground-scripts");
  });

  it("there but not loading: rebuilt in the project that holds it, naming the cause and the running Node", () => {
    const message = driverMissingMessage(
      { kind: "does-not-load", driverFolder: "/p/node_modules/better-sqlite3", cause: "invalid ELF header" },
      "v20.19.0",
    );
    expect(message).toContain(
      "is in /p/node_modules/better-sqlite3 but its native part does not load (invalid ELF header)",
    );
    expect(message).toContain("made for another Node than v20.19.0");
    expect(message).toContain("run in /p: npm rebuild better-sqlite3 --foreground-scripts");
  });
});
