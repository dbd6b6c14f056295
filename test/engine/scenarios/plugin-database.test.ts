// Where the real plugin function puts its database, and what its log line (OpenCode's app.log) says when that
// database cannot be used: `~` is the home folder, a relative path is the project directory's, another database's
// URL or a malformed one is a configuration error that keeps the enforcer off, and an unreachable server is said in
// one short line that names why — never the SQL, its parameters or a password (inside OpenCode's Bun too:
// plugin-database.bun.test.ts).
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TodoContinuation, type TodoContinuationHooks } from "../../../src/plugin/plugin.js";
import { readStatus } from "../../../src/plugin/status-file.js";
import { ev } from "../../support/events.js";
import { tempFolder } from "../../support/engine-fixture.js";
import { FakeHost } from "../../support/fake-host.js";
import { fakeSdkClient } from "../../support/fake-sdk-client.js";
import { expectShortLineSayingWhy } from "./unreachable-server-line.js";

let hooks: TodoContinuationHooks | undefined;
const savedHome = process.env.HOME;

afterEach(async () => {
  await hooks?.dispose();
  hooks = undefined;
  process.env.HOME = savedHome;
});

async function plugin(directory: string, options: Record<string, unknown>): Promise<FakeHost> {
  const host = new FakeHost();
  hooks = await TodoContinuation(
    {
      client: fakeSdkClient(host),
      directory,
      worktree: directory,
      project: { id: "p" },
      serverUrl: new URL("http://x"),
      $: undefined,
    } as never,
    { toast: false, ...options },
  );
  return host;
}

/** The log lines, once each asynchronous app.log call has landed. */
async function lines(host: FakeHost, count: number): Promise<string[]> {
  await vi.waitFor(() => expect(host.logs.length).toBeGreaterThanOrEqual(count), { timeout: 10_000 });
  return host.logs.map((l) => l.message);
}

describe("the plugin's database path", () => {
  it("expands ~ to the home folder and says where the database is", async () => {
    const home = tempFolder();
    const project = tempFolder();
    process.env.HOME = home;
    const host = await plugin(project, { databasePath: "~/todo.db" });
    expect(existsSync(join(home, "todo.db"))).toBe(true);
    expect(readdirSync(project)).toEqual([]);
    expect(await lines(host, 1)).toEqual([`todo-continuation: database ${join(home, "todo.db")}`]);
  });

  it("resolves a relative path against the project directory OpenCode gives the plugin", async () => {
    const project = tempFolder();
    const host = await plugin(project, { databasePath: "state/todo.db" });
    expect(existsSync(join(project, "state", "todo.db"))).toBe(true);
    expect(await lines(host, 1)).toEqual([`todo-continuation: database ${join(project, "state", "todo.db")}`]);
  });

  it.each([
    ["another database's URL", "mysql://u:s3cret@127.0.0.1/x", /databasePath = "mysql:\/\/u:\*\*\*@127\.0\.0\.1\/x"/],
    ["a malformed PostgreSQL URL", "postgres://u:s3cret@127.0.0.1:port/x", /allowed: a valid URL/],
  ])("%s is a configuration error: the enforcer stays off and says why", async (_, databasePath, reason) => {
    const project = tempFolder();
    const host = await plugin(project, { databasePath, storeProbeMs: 100 });
    // Off: nothing opened, nothing to retry; the status file says why, for `doctor` and the TUI.
    expect(readStatus(project)).toMatchObject({ state: "off", problems: [expect.stringMatching(reason)] });
    const logged = await lines(host, 1);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/^todo-continuation is off: invalid configuration: /);
    expect(logged[0]).toMatch(reason);
    expect(JSON.stringify(host.logs)).not.toContain("s3cret");
    expect(readdirSync(project)).toEqual([]);
  });
});

describe("a PostgreSQL server that nothing answers for", () => {
  it("is said in one short line naming why under Node, without SQL, parameters or password", async () => {
    const host = await plugin(tempFolder(), {
      databasePath: "postgres://u:s3cret@127.0.0.1:1/db",
      storeProbeMs: 100,
    });
    host.setTodos("ses_1", [["a", "pending"]]);
    hooks!.event!({ event: ev.idle("ses_1") } as never);
    await vi.waitFor(() => expect(host.logs.some((l) => l.message.includes("paused"))).toBe(true), {
      timeout: 10_000,
    });
    expectShortLineSayingWhy(host.logs);
  });
});
