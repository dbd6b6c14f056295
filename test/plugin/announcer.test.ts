// The real plugin function says what a person must know where they look: a refused configuration and a database it
// fell back from are written to the status file (for doctor and the TUI) and shown in one toast at the first idle
// (not if the TUI showed them already, never twice); another enforcer (oh-my-opencode's, on by default) is seen in
// OpenCode's config and said the same way, unless its config file turns its hook off.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TodoContinuation, type TodoContinuationHooks } from "../../src/plugin/plugin.js";
import { markSeen, readStatus } from "../../src/plugin/status-file.js";
import { userConfigFolder } from "../../src/config/files.js";
import { ev } from "../support/events.js";
import { FakeHost } from "../support/fake-host.js";
import { fakeSdkClient } from "../support/fake-sdk-client.js";
import { tempFolder } from "../support/temp-folders.js";

let hooks: TodoContinuationHooks | undefined;

afterEach(async () => {
  await hooks?.dispose();
  hooks = undefined;
});

async function start(directory: string, options: Record<string, unknown>): Promise<FakeHost> {
  const host = new FakeHost();
  hooks = await TodoContinuation(
    { client: fakeSdkClient(host), directory, worktree: directory, project: { id: "p" } } as never,
    options,
  );
  return host;
}

/**
 * OpenCode's events go to the hook without being awaited; the hook decides at once whether to toast (the toast call is
 * made before it returns), so "no toast" is known as soon as it returned.
 */
async function idle(host: FakeHost, toasts: number): Promise<void> {
  hooks!.event!({ event: ev.idle("ses_a") } as never);
  await expect.poll(() => host.toasts.length).toBe(toasts);
}

describe("the plugin's news", () => {
  it("a misspelt option: off, in the status file, and one toast at the first idle, naming the nearest option", async () => {
    const project = tempFolder();
    const host = await start(project, { countdownSecs: 3, databasePath: join(project, "t.db") });
    const status = readStatus(project)!;
    expect(status).toMatchObject({
      state: "off",
      headline: "off: invalid configuration",
      problems: ["invalid configuration: countdownSecs = 3; allowed: a known option (did you mean countdownSeconds?)"],
    });
    await idle(host, 1);
    expect(host.toasts[0]).toMatchObject({
      title: "todo-continuation is off",
      variant: "error",
      message: expect.stringContaining("did you mean countdownSeconds?"),
    });
    hooks!.event!({ event: ev.idle("ses_b") } as never);
    hooks!.event!({ event: ev.idle("ses_a") } as never);
    expect(host.toasts).toHaveLength(1);
  });

  it("a database it cannot open: in memory, said in the status file and in one toast", async () => {
    const project = tempFolder();
    const host = await start(project, { toast: false, databasePath: project });
    expect(readStatus(project)).toMatchObject({
      state: "memory",
      headline: "in memory: its database cannot be opened",
      problems: [expect.stringContaining("Continuing with an in-memory database")],
    });
    await idle(host, 1);
    expect(host.toasts[0]).toMatchObject({ title: "todo-continuation", variant: "error" });
  });

  it("OpenCode starting the plugin twice for one project (as the TUI's server does): still one toast", async () => {
    const project = tempFolder();
    const options = { countdownSecs: 3, databasePath: join(project, "t.db") };
    const firstHost = await start(project, options);
    const first = hooks!;
    const secondHost = await start(project, options);
    first.event!({ event: ev.idle("ses_a") } as never);
    await idle(secondHost, 0);
    await expect.poll(() => firstHost.toasts.length + secondHost.toasts.length).toBe(1);
    await first.dispose();
  });

  it("no toast from the server when the TUI already showed that start's news", async () => {
    const project = tempFolder();
    const host = await start(project, { maxContinuations: "many", databasePath: join(project, "t.db") });
    markSeen(readStatus(project)!);
    hooks!.event!({ event: ev.idle("ses_a") } as never);
    expect(host.toasts).toEqual([]);
  });

  it("a good start: on, with each option's value and source, and nothing on screen", async () => {
    const project = tempFolder();
    mkdirSync(join(project, ".opencode"));
    const file = join(project, ".opencode", "todo-continuation.json");
    writeFileSync(file, JSON.stringify({ maxContinuations: 5 }));
    const host = await start(project, { toast: false, databasePath: join(project, "t.db") });
    const status = readStatus(project)!;
    expect(status).toMatchObject({ state: "on", problems: [], warnings: [], files: [file] });
    expect(status.options).toMatchObject({
      maxContinuations: { value: 5, source: file },
      toast: { value: false, source: "plugin options" },
      countdownSeconds: { value: 2, source: "default" },
    });
    hooks!.event!({ event: ev.idle("ses_a") } as never);
    expect(host.toasts.filter((t) => t.title?.startsWith("todo-continuation"))).toEqual([]);
  });

  it("notify channels: a bad one said and left out, the good ones kept, and no credential in the status or a problem", async () => {
    const project = tempFolder();
    const secrets = ["T0ken-Sl4ck-p4th", "sign-me-secret", "tk_ntfy_token", "topic-password-x"];
    const host = await start(project, {
      databasePath: join(project, "t.db"),
      notify: [
        { type: "slack", url: `https://hooks.slack.com/services/${secrets[0]}` },
        { type: "webhook", url: "https://hooks.test/in", secret: secrets[1], kinds: ["quesiton"] },
        { type: "ntfy", url: `https://ntfy.test/${secrets[3]}`, token: secrets[2] },
      ],
    });
    const status = readStatus(project)!;
    expect(status.state).toBe("on");
    expect(status.warnings).toEqual([expect.stringMatching(/^a notify channel is left out: notify\[1\].*quesiton/)]);
    expect(host.logs.some((l) => l.message.includes("notify[1]"))).toBe(true);
    const said = JSON.stringify({ status, logs: host.logs });
    for (const secret of secrets) expect(said).not.toContain(secret);
    expect(status.options.notify!.value).toMatchObject([
      { type: "slack", url: "https://hooks.slack.com/…" },
      { type: "webhook", url: "https://hooks.test/…", secret: "(hidden)" },
      { type: "ntfy", url: "https://ntfy.test/…", token: "(hidden)" },
    ]);
  });

  it("a misspelt notify: off, and the problem shows the channel's host, never its path or token", async () => {
    const project = tempFolder();
    await start(project, {
      databasePath: join(project, "t.db"),
      notfy: [{ type: "ntfy", url: "https://ntfy.test/topic-password-x", token: "tk_ntfy_token" }],
    });
    const status = readStatus(project)!;
    expect(status.state).toBe("off");
    expect(status.problems).toEqual([expect.stringContaining("did you mean notify?")]);
    expect(status.problems[0]).toContain("https://ntfy.test/…");
    expect(JSON.stringify(status)).not.toMatch(/topic-password-x|tk_ntfy_token/);
  });

  describe("another enforcer in the same OpenCode", () => {
    const omo = (project: string, disabled: string[] | undefined) => {
      if (disabled === undefined) return;
      mkdirSync(join(project, ".opencode"), { recursive: true });
      writeFileSync(
        join(project, ".opencode", "oh-my-opencode.jsonc"),
        `{ // the peer's own file\n "disabled_hooks": ${JSON.stringify(disabled)}, }`,
      );
    };

    it.each([
      ["oh-my-opencode", undefined, true],
      ["oh-my-opencode@3.1.0", ["comment-checker"], true],
      ["file:///home/u/src/oh-my-opencode/dist/index.js", undefined, true],
      ["oh-my-openagent", undefined, true],
      ["oh-my-opencode", ["todo-continuation-enforcer"], false],
      ["opencode-wakatime", undefined, false],
    ])("%s with disabled_hooks %j: warned %s", async (spec, disabled, warned) => {
      const project = tempFolder();
      omo(project, disabled);
      const host = await start(project, { toast: false, databasePath: join(project, "t.db") });
      await hooks!.config!({ plugin: ["opencode-todo-continuation", [spec, {}]] } as never);
      const warnings = readStatus(project)!.warnings;
      if (!warned) return expect(warnings).toEqual([]);
      expect(warnings).toEqual([
        expect.stringContaining(`${spec} is loaded too, and its own todo-continuation-enforcer is on`),
      ]);
      expect(warnings[0]).toContain('add "disabled_hooks": ["todo-continuation-enforcer"] to');
      expect(warnings[0]).toContain(
        disabled ? join(project, ".opencode", "oh-my-opencode.jsonc") : join(userConfigFolder(), "oh-my-opencode.json"),
      );
      await idle(host, 1);
      expect(host.toasts[0]).toMatchObject({ variant: "warning", message: warnings[0] });
      expect(host.logs.map((l) => l.message)).toContain(`todo-continuation: ${warnings[0]}`);
    });
  });
});
