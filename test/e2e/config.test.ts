// A bad option must not harm OpenCode: one clear error in OpenCode's log naming the key, the enforcer off, and
// sessions working as if the plugin were not there.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readStatus } from "../../src/plugin/status-file.js";
import { E2E } from "./support/harness.js";
import { script } from "./scenarios.js";

describe("an invalid plugin option", () => {
  const world = new E2E(script, { countdownSeconds: "soon", stagnationLimit: 3 });

  beforeAll(async () => {
    await world.start();
  }, 60_000);
  afterAll(async () => {
    await world.stop();
  });

  it("is reported once in OpenCode's log, turns the enforcer off and leaves OpenCode working", async () => {
    const id = await world.session("basic");
    await world.prompt(id, "scenario: basic");
    await world.waitFor("the model's last call of the turn", () => world.requestsFor("basic").length >= 2);
    // The plugin decided at load: its one line says it is off, and it opened no database (asserted below), so it has
    // nothing to arm or send with. The last thing it could act on is the turn's idle: wait for OpenCode to report it.
    await world.waitFor("the turn to end", () => world.sessionIdle(id));
    const errors = world.server
      .output()
      .split("\n")
      .filter((line) => line.includes("todo-continuation is off"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('countdownSeconds = \\"soon\\"');
    expect(errors[0]).toContain("allowed: a number from 0 to 3600");
    expect(await world.todos(id)).toHaveLength(3);
    expect(world.continuationRequests("basic")).toEqual([]);
    expect(existsSync(world.dbPath)).toBe(false);
  });
});

/** A world whose project has `fileText` as its todo-continuation.jsonc and oh-my-opencode in its opencode.json. */
function worldWithPeer(fileText: string) {
  const world = new E2E(script, {});
  const project = join(world.root, "project");
  const configFile = join(project, ".opencode", "todo-continuation.jsonc");
  const peer = join(world.root, "peer", "oh-my-opencode", "index.js");
  const toasts: Array<{ title?: string; message: string; variant: string }> = [];
  const listening = new AbortController();
  const statusOf = () =>
    world.waitFor("the plugin's status with OpenCode's config seen", () => {
      const s = readStatus(project, { XDG_STATE_HOME: join(world.root, "home", "state") });
      return s && s.warnings.length > 0 ? s : undefined;
    });

  beforeAll(async () => {
    mkdirSync(join(project, ".opencode"), { recursive: true });
    writeFileSync(configFile, fileText);
    // A stand-in for oh-my-opencode (its name is what counts): a plugin that does nothing.
    mkdirSync(dirname(peer), { recursive: true });
    writeFileSync(peer, "export const OhMyOpenCode = async () => ({});\n");
    writeFileSync(join(project, "opencode.json"), JSON.stringify({ plugin: [pathToFileURL(peer).href] }));
    await world.start();
    const events = await world.server.client.event.subscribe({ signal: listening.signal });
    void (async () => {
      for await (const event of events.stream as AsyncIterable<{ type: string; properties: never }>)
        if (event.type === "tui.toast.show") toasts.push(event.properties);
    })().catch(() => undefined);
  }, 60_000);
  afterAll(async () => {
    listening.abort();
    await world.stop();
  });
  return { world, configFile, peer, toasts, statusOf };
}

describe("a configuration file with a misspelt option, and oh-my-opencode in the project's opencode.json", () => {
  const { world, configFile, peer, toasts, statusOf } = worldWithPeer(
    '{\n  // five seconds to read it\n  "countdownSecs": 5,\n}\n',
  );

  it("keeps the enforcer off, writes why for doctor and the TUI, and shows it in one toast at the first idle", async () => {
    const status = await statusOf();
    expect(status).toMatchObject({
      state: "off",
      files: [configFile],
      problems: [
        `invalid configuration: in ${configFile}: countdownSecs = 5; allowed: a known option (did you mean countdownSeconds?)`,
      ],
    });
    expect(status.warnings).toEqual([
      expect.stringContaining(
        `${pathToFileURL(peer).href} is loaded too, and its own todo-continuation-enforcer is on`,
      ),
    ]);

    const id = await world.session("basic");
    await world.prompt(id, "scenario: basic");
    await world.waitFor("the turn to end", () => world.sessionIdle(id));
    const toast = await world.waitFor("the plugin's toast", () =>
      toasts.find((t) => t.title === "todo-continuation is off"),
    );
    expect(toast.variant).toBe("error");
    expect(toast.message).toContain("did you mean countdownSeconds?");
    expect(toast.message).toContain('add "disabled_hooks": ["todo-continuation-enforcer"]');
    expect(world.continuationRequests("basic")).toEqual([]);
    expect(existsSync(world.dbPath)).toBe(false);
  });
});

describe("a valid configuration file, and oh-my-opencode in the project's opencode.json", () => {
  const { world, configFile, toasts, statusOf } = worldWithPeer('{ "countdownSeconds": 1 }\n');

  it("enforces, with the file's option, and warns of the other enforcer in one toast at the first idle", async () => {
    const status = await statusOf();
    expect(status).toMatchObject({ state: "on", problems: [] });
    expect(status.options.countdownSeconds).toEqual({ value: 1, source: configFile });
    const id = await world.session("basic");
    await world.prompt(id, "scenario: basic");
    await world.waitForAudit(id, "injected", 60_000);
    const toast = await world.waitFor("the plugin's warning", () =>
      toasts.find((t) => t.title === "todo-continuation"),
    );
    expect(toast.variant).toBe("warning");
    expect(toast.message).toContain("its own todo-continuation-enforcer is on");
    // Later idles (the continuation's turn, then all todos done) tell nothing again.
    await world.trailAtRest(id, "skipped:todos_complete");
    expect(toasts.filter((t) => t.title === "todo-continuation")).toHaveLength(1);
  });
});
