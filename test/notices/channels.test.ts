// The `notify` option read into channels: defaults, names stable across restarts, one clear problem line per channel
// left out (never showing a secret), and the valid channels kept beside a wrong one.
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeChannel, parseChannels } from "../../src/notices/channels.js";
import { tempFolder } from "../support/temp-folders.js";

const SLACK = "https://hooks.slack.com/services/T000/B000/SLACKSECRETPATH";
const NTFY = "https://ntfy.example.com/my-secret-topic?auth=QUERYSECRET";
const ENV = { PATH: "/usr/bin:/bin" };

/** The only problem of `raw`, checked to name nothing secret. */
function onlyProblem(raw: unknown[], env: NodeJS.ProcessEnv = ENV): string {
  const { channels, problems } = parseChannels(raw, env);
  expect(channels).toEqual([]);
  expect(problems).toHaveLength(1);
  for (const secret of ["SLACKSECRETPATH", "my-secret-topic", "QUERYSECRET", "tk_token", "hmac-secret"])
    expect(problems[0]).not.toContain(secret);
  return problems[0]!;
}

describe("parseChannels", () => {
  it("fills the defaults: every kind but waiting (a park is news only to who asks), a 10 s timeout, the type as the name", () => {
    const { channels, problems } = parseChannels([{ type: "slack", url: SLACK }], ENV);
    expect(problems).toEqual([]);
    expect(channels).toEqual([
      {
        type: "slack",
        name: "slack",
        url: SLACK,
        kinds: ["question", "budget", "stuck", "done", "error"],
        timeoutMs: 10_000,
      },
    ]);
    const asked = parseChannels([{ type: "slack", url: SLACK, kinds: ["waiting", "done"] }], ENV).channels;
    expect(asked[0]!.kinds).toEqual(["done", "waiting"]);
  });

  it("names several of a type type, type-2, type-3, skipping a name given to another, whatever is wrong", () => {
    const { channels } = parseChannels(
      [
        { type: "ntfy", url: NTFY },
        { type: "ntfy", url: "ftp://wrong" },
        { type: "ntfy", url: NTFY, name: "ntfy-3" },
        { type: "ntfy", url: NTFY },
        { type: "slack", url: SLACK, name: "phone" },
      ],
      ENV,
    );
    expect(channels.map((c) => c.name)).toEqual(["ntfy", "ntfy-3", "ntfy-4", "phone"]);
  });

  it("reads every field of each type", () => {
    const folder = tempFolder();
    const script = join(folder, "notify.sh");
    writeFileSync(script, "#!/bin/sh\n");
    chmodSync(script, 0o755);
    const { channels, problems } = parseChannels(
      [
        { type: "webhook", url: "https://hooks.example.com/x", secret: "hmac-secret", headers: { Authorization: "B" } },
        {
          type: "ntfy",
          url: NTFY,
          token: { env: "NTFY_TOKEN" },
          priority: 5,
          tags: ["robot", " laptop "],
          kinds: ["done", "question"],
        },
        { type: "discord", url: "https://discord.com/api/webhooks/1/abc", timeoutMs: 2000 },
        { type: "command", command: "sh", args: ["-c", "true"] },
        { type: "command", command: "./notify.sh" },
      ],
      { ...ENV, NTFY_TOKEN: "tk_token" },
      folder,
    );
    expect(problems).toEqual([]);
    expect(channels[0]).toMatchObject({ secret: "hmac-secret", headers: { Authorization: "B" } });
    expect(channels[1]).toMatchObject({
      token: "tk_token",
      priority: 5,
      tags: ["robot", "laptop"],
      kinds: ["question", "done"],
    });
    expect(channels[2]).toMatchObject({ name: "discord", timeoutMs: 2000 });
    expect(channels[3]).toMatchObject({ name: "command", command: "sh", args: ["-c", "true"] });
    expect(channels[4]).toMatchObject({ name: "command-2", command: script });
  });

  it("keeps the valid channels beside a wrong one", () => {
    const { channels, problems } = parseChannels(
      [
        { type: "slack", url: SLACK },
        { type: "slak", url: SLACK },
        { type: "discord", url: "https://discord.com/api/webhooks/1/a" },
      ],
      ENV,
    );
    expect(channels.map((c) => c.type)).toEqual(["slack", "discord"]);
    expect(problems).toEqual([
      'notify[1]: type = "slak"; allowed: webhook, ntfy, slack, discord, command (did you mean slack?)',
    ]);
  });

  it("names each wrong input once, with the key, the value without secrets and what is allowed", () => {
    expect(onlyProblem([{ type: "ntfy", url: NTFY, kinds: ["questions"] }])).toBe(
      'notify[0] (ntfy): kinds = ["questions"]; allowed: a non-empty array of question, budget, stuck, done, error, waiting (did you mean question?)',
    );
    expect(onlyProblem([{ type: "slack", url: "ftp://hooks.slack.com/services/T000/B000/SLACKSECRETPATH" }])).toBe(
      'notify[0] (slack): url = "ftp://hooks.slack.com/…"; allowed: an http:// or https:// URL',
    );
    expect(onlyProblem([{ type: "slack", url: "hooks.slack.com/services/T000/B000/SLACKSECRETPATH" }])).toBe(
      'notify[0] (slack): url = "hooks.slack.com…"; allowed: an http:// or https:// URL (this one does not parse)',
    );
    expect(onlyProblem([{ type: "ntfy", url: NTFY, priority: 7 }])).toBe(
      "notify[0] (ntfy): priority = 7; allowed: an integer from 1 to 5",
    );
    expect(onlyProblem([{ type: "webhook", url: SLACK, secrt: "hmac-secret" }])).toBe(
      "notify[0] (webhook): secrt = (hidden); allowed: a key of a webhook channel: type, name, kinds, timeoutMs, url, secret, headers (did you mean secret?)",
    );
    expect(onlyProblem([{ type: "ntfy", url: NTFY, token: { env: "NO_SUCH_TOKEN" } }])).toBe(
      'notify[0] (ntfy): token = {"env":"NO_SUCH_TOKEN"}; allowed: an environment variable that is set (NO_SUCH_TOKEN is not)',
    );
    expect(onlyProblem([{ type: "ntfy", url: NTFY, token: 12345 }])).toBe(
      'notify[0] (ntfy): token = (hidden); allowed: a string, or {"env": "VARIABLE"} to read it from the environment',
    );
    expect(onlyProblem([{ type: "slack" }])).toBe(
      "notify[0] (slack): url = (missing); allowed: an http:// or https:// URL",
    );
    expect(onlyProblem(["slack"])).toBe('notify[0] = "slack"; allowed: an object with a type');
  });

  it("leaves out the second channel of a name", () => {
    const { channels, problems } = parseChannels(
      [
        { type: "slack", url: SLACK, name: "team" },
        { type: "discord", url: "https://discord.com/api/webhooks/1/a", name: "team" },
      ],
      ENV,
    );
    expect(channels.map((c) => c.type)).toEqual(["slack"]);
    expect(problems).toEqual([
      'notify[1] (team): name = "team"; allowed: a name no other channel has (notify[0] has it)',
    ]);
  });

  it("finds a command on PATH like a shell, and says when it is missing or not executable", () => {
    const folder = tempFolder();
    const plain = join(folder, "plain.sh");
    writeFileSync(plain, "#!/bin/sh\n");
    chmodSync(plain, 0o644);
    expect(parseChannels([{ type: "command", command: "sh" }], ENV).problems).toEqual([]);
    expect(onlyProblem([{ type: "command", command: "notfy-send" }])).toBe(
      'notify[0] (command): command = "notfy-send"; allowed: a program found on PATH or a path to one (no notfy-send on PATH)',
    );
    expect(onlyProblem([{ type: "command", command: plain }])).toBe(
      `notify[0] (command): command = "${plain}"; allowed: an executable file (${plain} is not executable)`,
    );
    expect(onlyProblem([{ type: "command", command: "plain.sh" }], { PATH: folder })).toBe(
      `notify[0] (command): command = "plain.sh"; allowed: a program found on PATH or a path to one (${plain} is not executable)`,
    );
  });

  it("joins several problems of one channel in its one line", () => {
    const line = onlyProblem([{ type: "ntfy", url: "ftp://x.example/secret", priority: 0, timeoutMs: 5 }]);
    expect(line).toBe(
      'notify[0] (ntfy): url = "ftp://x.example/…"; allowed: an http:// or https:// URL · priority = 0; allowed: an integer from 1 to 5 · timeoutMs = 5; allowed: an integer from 100 to 600000',
    );
  });

  it("refuses headers the enforcer sets and header values that cannot be sent", () => {
    expect(onlyProblem([{ type: "webhook", url: SLACK, headers: { "X-Todo-Continuation-Id": "hmac-secret" } }])).toBe(
      "notify[0] (webhook): headers.X-Todo-Continuation-Id = (hidden); allowed: a header the enforcer does not set itself",
    );
    expect(onlyProblem([{ type: "webhook", url: SLACK, headers: { Authorization: "hmac-secret\nX: y" } }])).toBe(
      "notify[0] (webhook): headers.Authorization = (hidden); allowed: printable ASCII on one line",
    );
  });

  it("takes nothing as no channels, and anything but an array as one problem", () => {
    expect(parseChannels(undefined)).toEqual({ channels: [], problems: [] });
    expect(parseChannels({ type: "slack" }).problems).toEqual([
      'notify = {"type":"slack"}; allowed: an array of channels',
    ]);
  });
});

describe("describeChannel", () => {
  it("shows the type and host, never a path, token or secret", () => {
    const { channels } = parseChannels(
      [
        { type: "ntfy", url: NTFY, token: "tk_token" },
        { type: "webhook", url: "https://user:pw@hooks.example.com/hook/abc", secret: "hmac-secret" },
        { type: "command", command: "sh", args: ["-c", "echo hmac-secret"] },
      ],
      ENV,
    );
    expect(channels.map(describeChannel)).toEqual([
      "ntfy ntfy.example.com/…",
      "webhook hooks.example.com/…",
      "command sh",
    ]);
  });
});
