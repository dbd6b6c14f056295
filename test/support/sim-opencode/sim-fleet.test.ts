// The simulated OpenCode fleet on its own: a session needs exactly `todosPerSession` continuations, doubles and
// losses are counted, the service's own host adapter reads it as it reads OpenCode, latency and freezes delay answers,
// and a thousand servers of fifty sessions start in one process (start time and memory printed, not asserted).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { createOpencodeClient } from "@opencode-ai/sdk";
import { OpenCodeHost } from "../../../src/host/opencode-host.js";
import { newMessageId } from "../../../src/engine/ids.js";
import { waitFor } from "../wait-for.js";
import { startSimFleet, type SimFleet, type SimFleetOptions } from "./fleet.js";
import { TinyClient } from "./tiny-client.js";

let fleet: SimFleet | undefined;
let client: TinyClient | undefined;

afterEach(async () => {
  await client?.stop();
  await fleet?.stop();
  client = fleet = undefined;
});

async function driven(options: SimFleetOptions, clientOptions?: ConstructorParameters<typeof TinyClient>[1]) {
  fleet = await startSimFleet({ paused: true, ...options });
  client = new TinyClient(fleet.servers, clientOptions);
  await client.start();
  fleet.begin();
  return fleet;
}

const signal = () => AbortSignal.timeout(5000);

describe("a simulated fleet driven by a tiny continuation client", () => {
  it("finishes every session with exactly todosPerSession prompts each", async () => {
    const sim = await driven({ servers: 3, sessionsPerServer: 4, todosPerSession: 3, turnMs: 40, startStaggerMs: 50 });
    await waitFor("every session finished", () => sim.stats().finished === 12, { timeoutMs: 10_000 });
    const stats = sim.stats();
    expect(client!.failures).toEqual([]);
    expect(stats).toMatchObject({ sessions: 12, prompts: 36, doubled: 0, afterDone: 0, unfinished: 0, busy: 0 });
    expect(stats.promptsPerSession).toEqual({ 3: 12 });
    expect(stats.turns).toBe(12 * 4);
  });

  it("counts a prompt on a busy session as doubled, and a session nobody continued as unfinished", async () => {
    const sim = await driven(
      { servers: 1, sessionsPerServer: 3, todosPerSession: 2, turnMs: 1000 },
      { promptsPerIdle: 2, skip: (id) => id === [...fleetSessions()][2] },
    );
    // Two prompts per idle: the second finds the session busy, and its turn completes a todo as well.
    await waitFor("the continued sessions finished", () => sim.stats().finished === 2, { timeoutMs: 10_000 });
    await waitFor("at rest", () => sim.stats().busy === 0, { timeoutMs: 10_000 });
    const stats = sim.stats();
    expect(stats).toMatchObject({ finished: 2, unfinished: 1, doubled: 2, prompts: 4 });
    expect(stats.promptsPerSession).toEqual({ 0: 1, 2: 2 });
  });

  it("counts a prompt on a session whose todos are all completed as one too many", async () => {
    const sim = await driven({ servers: 1, sessionsPerServer: 1, todosPerSession: 1, turnMs: 30 });
    await waitFor("finished", () => sim.stats().finished === 1, { timeoutMs: 10_000 });
    const server = sim.servers[0]!;
    const sdk = createOpencodeClient({ baseUrl: server.url, directory: server.directory });
    const [id] = fleetSessions();
    await sdk.session.promptAsync({
      path: { id: id! },
      body: { parts: [{ type: "text", text: "more" }] },
      throwOnError: true,
    });
    expect(sim.stats()).toMatchObject({ prompts: 2, afterDone: 1, doubled: 0 });
  });
});

function fleetSessions(): string[] {
  return [...fleet!.sims[0]!.sessions.keys()];
}

describe("the first turns", () => {
  it("start spread over startStaggerMs: a session not started yet is idle, without todos", async () => {
    fleet = await startSimFleet({ servers: 1, sessionsPerServer: 3, startStaggerMs: 400, turnMs: 2000 });
    expect(fleet.stats()).toMatchObject({ busy: 1, turns: 0 });
    const server = fleet.servers[0]!;
    const sdk = createOpencodeClient({ baseUrl: server.url, directory: server.directory });
    const last = fleetSessions()[2]!;
    expect((await sdk.session.todo({ path: { id: last }, throwOnError: true })).data).toEqual([]);
    await waitFor("every first turn started", () => fleet!.stats().busy === 3);
  });
});

describe("the service's host adapter reading a simulated server", () => {
  it("reads todos, messages with the prompt it sent, statuses, the session's spend and the agents", async () => {
    // Turns long enough that the status read right after the prompt still finds its turn running on a loaded machine.
    fleet = await startSimFleet({ servers: 1, sessionsPerServer: 1, todosPerSession: 3, turnMs: 1500 });
    const server = fleet.servers[0]!;
    const host = new OpenCodeHost(
      createOpencodeClient({ baseUrl: server.url, directory: server.directory }),
      server.directory,
    );
    const [id] = fleetSessions();
    await waitFor("the first turn ended", async () => (await host.getStatuses(signal()))[id!] === undefined);
    expect(await host.getTodos(id!, signal())).toEqual([
      { content: "task 1", status: "pending", priority: "medium" },
      { content: "task 2", status: "pending", priority: "medium" },
      { content: "task 3", status: "pending", priority: "medium" },
    ]);
    const messageId = newMessageId();
    await host.prompt({ sessionId: id!, text: "the prompt", display: "shown", messageId, agent: "build" }, signal());
    expect(await host.getStatuses(signal())).toEqual({ [id!]: "busy" });
    await waitFor("the continuation's turn ended", async () => (await host.getStatuses(signal()))[id!] === undefined);
    const messages = await host.getMessages(id!, signal(), 60);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "assistant", "user", "assistant", "assistant"]);
    expect(messages[3]).toMatchObject({
      id: messageId,
      parts: [
        { type: "text", text: "the prompt", synthetic: true },
        { type: "text", text: "shown" },
      ],
    });
    expect(messages[4]).toMatchObject({ parentId: messageId, finish: "tool-calls", usage: { tokens: { input: 10 } } });
    expect(messages[4]!.parts.map((p) => [p.type, p.tool, p.toolStatus])).toContainEqual([
      "tool",
      "todowrite",
      "completed",
    ]);
    expect((await host.getMessages(id!, signal(), 2)).map((m) => m.finish)).toEqual(["tool-calls", "stop"]);
    expect((await host.getTodos(id!, signal())).map((t) => t.status)).toEqual(["completed", "pending", "pending"]);
    expect((await host.getSession(id!, signal()))?.spend).toMatchObject({ tokens: { input: 40, output: 20 } });
    expect(await host.getChildren(id!, signal())).toEqual([]);
    const agents = await host.getAgents(signal());
    expect(agents.find((a) => a.name === "build")?.canWrite).toBe(true);
    // The e2e servers' configuration ends every agent's rules with `"*": "allow"`: even plan's edit rule is overridden.
    expect(agents.map((a) => a.name)).toEqual([
      "build",
      "compaction",
      "explore",
      "general",
      "plan",
      "summary",
      "title",
    ]);
    await host.toast({ message: "counting down", variant: "info", durationMs: 1500 });
  });

  it("answers 404 for a session it does not have, and nothing of another directory's instance", async () => {
    fleet = await startSimFleet({ servers: 1, sessionsPerServer: 2, turnMs: 5000 });
    const server = fleet.servers[0]!;
    const host = new OpenCodeHost(
      createOpencodeClient({ baseUrl: server.url, directory: server.directory }),
      server.directory,
    );
    await expect(host.getTodos("ses_nothere", signal())).rejects.toThrow("Session not found: ses_nothere");
    await expect(host.prompt({ sessionId: "ses_nothere", text: "x" }, signal())).rejects.toMatchObject({ status: 404 });
    const elsewhere = new OpenCodeHost(
      createOpencodeClient({ baseUrl: server.url, directory: "/elsewhere" }),
      "/elsewhere",
    );
    expect(await elsewhere.getStatuses(signal())).toEqual({});
    expect(Object.keys(await host.getStatuses(signal()))).toHaveLength(2);
  });
});

describe("latency and freezes", () => {
  it("answers after latencyMs, and holds every answer of a frozen server until it thaws", async () => {
    fleet = await startSimFleet({ servers: 2, sessionsPerServer: 1, latencyMs: 150, turnMs: 5000 });
    const [a, b] = fleet.servers;
    const timed = async (url: string) => {
      const started = Date.now();
      const res = await fetch(`${url}/session/status`, { signal: signal() });
      expect(res.status).toBe(200);
      return Date.now() - started;
    };
    expect(await timed(a!.url)).toBeGreaterThanOrEqual(145);
    fleet.freeze(1, 600);
    const [frozen, answering] = await Promise.all([timed(b!.url), timed(a!.url)]);
    expect(answering).toBeLessThan(frozen);
    expect(frozen).toBeGreaterThanOrEqual(590);
  });

  it("delays only the calls given a latency of their own", async () => {
    fleet = await startSimFleet({
      servers: 1,
      sessionsPerServer: 1,
      latencyMs: { "session.status": 200 },
      turnMs: 5000,
    });
    const [server] = fleet.servers;
    const order: string[] = [];
    const call = (path: string) => fetch(`${server!.url}${path}`, { signal: signal() }).then(() => order.push(path));
    const started = Date.now();
    await Promise.all([call("/session/status"), call("/agent")]);
    expect(order).toEqual(["/agent", "/session/status"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(195);
  });
});

describe("the sim fleet as a process of its own (main.ts)", () => {
  it("prints its servers when ready, its stats when asked, and its last stats when stopped", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(import.meta.dirname, "main.ts"), "--servers", "2"].concat([
        "--sessions",
        "3",
        "--turn-ms",
        "30",
        "--latency-ms",
        '{"session.todo":5}',
        "--events",
        "lean",
      ]),
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    try {
      const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      const next = async () => JSON.parse((await lines.next()).value as string) as Record<string, any>;
      const ready = await next();
      expect(ready).toMatchObject({
        type: "ready",
        servers: [{ name: "sim-0", directory: "/sim/project-0" }, { name: "sim-1" }],
      });
      const status = await fetch(`${ready.servers[1].url}/session/status`);
      expect(status.status).toBe(200);
      child.kill("SIGUSR2");
      expect(await next()).toMatchObject({ type: "stats", servers: 2, sessions: 6 });
      child.stdin!.write("stats\n");
      expect(await next()).toMatchObject({ type: "stats", sessions: 6 });
      child.kill("SIGTERM");
      expect(await next()).toMatchObject({ type: "final", sessions: 6 });
      expect(await exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe("killed and started again; a password", () => {
  it("killed, it ends its streams and answers nothing; started again, it answers on the same port with its sessions", async () => {
    fleet = await startSimFleet({ servers: 1, sessionsPerServer: 1, turnMs: 30 });
    const [sim] = fleet.sims;
    const url = sim!.url;
    const [id] = fleetSessions();
    const stream = await fetch(`${url}/event?directory=${encodeURIComponent(sim!.directory)}`);
    const reader = stream.body!.getReader();
    expect((await reader.read()).done).toBe(false); // server.connected
    await sim!.close();
    expect(
      await reader.read().then(
        (r) => r.done,
        () => true,
      ),
    ).toBe(true);
    await expect(fetch(`${url}/session/status`, { signal: signal() })).rejects.toThrow();
    await sim!.restart();
    expect(sim!.url).toBe(url);
    const host = new OpenCodeHost(createOpencodeClient({ baseUrl: url, directory: sim!.directory }), sim!.directory);
    await waitFor("the first turn ended", async () => (await host.getStatuses(signal()))[id!] === undefined);
    expect(await host.getTodos(id!, signal())).toHaveLength(3);
  });

  it("given a password, answers 401 to a request without OpenCode's basic auth and serves one with it", async () => {
    fleet = await startSimFleet({ servers: 1, sessionsPerServer: 1, password: "pw" });
    const server = fleet.servers[0]!;
    const status = `${server.url}/session/status?directory=${encodeURIComponent(server.directory)}`;
    expect((await fetch(status, { signal: signal() })).status).toBe(401);
    const wrong = { authorization: `Basic ${Buffer.from("opencode:nope").toString("base64")}` };
    expect((await fetch(status, { headers: wrong, signal: signal() })).status).toBe(401);
    const headers = { Authorization: `Basic ${Buffer.from("opencode:pw").toString("base64")}` };
    const client = createOpencodeClient({ baseUrl: server.url, directory: server.directory, headers });
    expect(Object.keys(await new OpenCodeHost(client, server.directory).getStatuses(signal()))).toHaveLength(1);
  });
});

describe("a thousand servers in one process", () => {
  it(
    "starts 1,000 servers of 50 sessions each, every one answering on its own port",
    { timeout: 120_000 },
    async () => {
      const before = process.memoryUsage();
      const started = performance.now();
      fleet = await startSimFleet({ servers: 1000, sessionsPerServer: 50, paused: true });
      const startMs = performance.now() - started;
      const after = process.memoryUsage();
      expect(new Set(fleet.servers.map((s) => s.url)).size).toBe(1000);
      const last = fleet.servers[999]!;
      const list = (await (
        await fetch(`${last.url}/session?directory=${encodeURIComponent(last.directory)}`)
      ).json()) as unknown[];
      expect(list).toHaveLength(50);
      const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
      console.log(
        `1,000 servers × 50 sessions: started in ${Math.round(startMs)} ms; RSS ${mb(after.rss)} ` +
          `(+${mb(after.rss - before.rss)}), heap +${mb(after.heapUsed - before.heapUsed)}`,
      );
    },
  );
});
