// Never twice and nothing lost, against a real OpenCode server, with the enforcer outside it (the standalone service,
// the built CLI) so that a real fault can sit on the wire between them: an answer lost after OpenCode took the
// prompt, and a crash of the enforcer while it reads OpenCode after an idle. Also OpenCode itself killed 100 ms after
// an idle, with the plugin inside.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT } from "../crash/processes.js";
import { sleep } from "../support/wait-for.js";
import { E2E } from "./support/harness.js";
import { freePort, TcpProxy } from "./support/tcp-proxy.js";
import { script } from "./scenarios.js";

interface Service {
  child: ChildProcess;
  log: () => string;
}

function startService(world: E2E, url: string, options: Record<string, unknown>): Promise<Service> {
  let log = "";
  const child = spawn(
    process.execPath,
    [
      join(ROOT, "dist", "cli", "main.js"),
      "serve",
      "--url",
      url,
      "--directory",
      world.server.project,
      "--db",
      world.dbPath,
      "--options",
      JSON.stringify(options),
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout!.on("data", (c: Buffer) => (log += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (log += c.toString()));
  const service = { child, log: () => log };
  return world.waitFor(
    "the service to follow the server",
    () => log.includes("following http://127.0.0.1") && service,
    20_000,
  );
}

async function kill(service: Service | undefined): Promise<void> {
  const child = service?.child;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGKILL");
  await exited;
}

/** Resolves (with the time) when OpenCode publishes `session.idle` for the session. */
async function nextIdle(world: E2E, sessionId: string, signal: AbortSignal): Promise<number> {
  const events = await world.server.client.event.subscribe({ signal });
  for await (const event of events.stream as AsyncIterable<{ type: string; properties: { sessionID?: string } }>) {
    if (event.type === "session.idle" && event.properties.sessionID === sessionId) return Date.now();
  }
  throw new Error("the event stream ended before the idle");
}

let world: E2E | undefined;
let proxy: TcpProxy | undefined;
const services: Service[] = [];

afterEach(async () => {
  for (const service of services.splice(0)) await kill(service);
  await proxy?.stop();
  await world?.stop();
  proxy = undefined;
  world = undefined;
});

describe("faults between the enforcer and a real OpenCode server", () => {
  it("§1 the answer to the prompt call is lost after OpenCode took it: found by its id, exactly one continuation", async () => {
    const port = await freePort();
    world = new E2E(script, false, { port });
    await world.start();
    proxy = new TcpProxy(port);
    const proxyPort = await proxy.start();
    proxy.dropAnswersTo(/^POST \/session\/[^/]+\/prompt_async/);
    services.push(await startService(world, `http://127.0.0.1:${proxyPort}`, { countdownSeconds: 1 }));

    const id = await world.session("basic");
    await world.prompt(id, "scenario: basic");
    await world.waitForAudit(id, "injected", 30_000);
    // The continuation's turn may end before the lost call is settled (its idle then defers to the pending
    // continuation, `in_flight`, and the look it owes after it closes the trail) or after: one of two exact trails.
    const trail = await world.trailAtRest(id, "skipped:todos_complete", 30_000);
    expect([
      ["armed", "fired", "injected", "skipped:todos_complete"],
      ["armed", "fired", "skipped:in_flight", "injected", "skipped:todos_complete"],
    ]).toContainEqual(trail);
    expect(proxy.dropped).toBe(1);
    expect(world.continuationRequests("basic")).toHaveLength(1);
    expect(world.injections(id)).toMatchObject([{ status: "sent" }]);
    const injected = world.audit(id).find((r) => r.event === "injected")!;
    expect(String(injected.detail.afterError)).toMatch(/fetch failed|socket|closed|reset|terminated/i);
    console.log(
      `e2e lost answer: the prompt call failed with "${injected.detail.afterError}", the continuation was found in the session; 1 continuation`,
    );
  }, 90_000);

  it("§6 the enforcer dies 100 ms after an idle while it reads OpenCode: after its restart, exactly one continuation", async () => {
    const port = await freePort();
    world = new E2E(script, false, { port });
    await world.start();
    proxy = new TcpProxy(port);
    const proxyPort = await proxy.start();
    // Every read takes 2 s: the enforcer is still gathering its facts when it is killed.
    proxy.slowDown(2000);
    const url = `http://127.0.0.1:${proxyPort}`;
    services.push(await startService(world, url, { countdownSeconds: 1, hostTimeoutMs: 10_000 }));

    const id = await world.session("basic");
    const watching = new AbortController();
    const idle = nextIdle(world, id, watching.signal);
    await world.prompt(id, "scenario: basic");
    const idleAt = await idle;
    watching.abort();
    // Killed 100 ms after the idle (while its reads, slowed to 2 s each, are under way): where the scenario crashes.
    await sleep(Math.max(0, idleAt + 100 - Date.now()));
    await kill(services.pop());
    const killedAfter = Date.now() - idleAt;
    // The idle is in the database (owed a look), nothing was decided yet.
    expect(world.audit(id)).toEqual([]);
    expect(world.countdowns(id)).toEqual([]);

    proxy.slowDown(0);
    services.push(await startService(world, url, { countdownSeconds: 1 }));
    const armed = await world.waitForAudit(id, "armed", 20_000);
    expect(armed.detail).toMatchObject({ trigger: "restart" });
    expect(await world.trailAtRest(id, "skipped:todos_complete", 30_000)).toEqual([
      "armed",
      "fired",
      "injected",
      "skipped:todos_complete",
    ]);
    expect(world.continuationRequests("basic")).toHaveLength(1);
    expect(world.injections(id)).toMatchObject([{ status: "sent" }]);
    console.log(
      `e2e crash after idle: enforcer killed ${killedAfter} ms after the idle; after its restart: ${world.trail(id).join(", ")}`,
    );
  }, 120_000);

  it("§6 OpenCode (with the plugin) killed 100 ms after an idle: after its restart, exactly one continuation", async () => {
    world = new E2E(script, { countdownSeconds: 2 });
    await world.start();
    const id = await world.session("restart");
    const watching = new AbortController();
    const idle = nextIdle(world, id, watching.signal);
    await world.prompt(id, "scenario: restart");
    const idleAt = await idle;
    watching.abort();
    // Killed 100 ms after the idle: where the scenario crashes, not a wait for an outcome.
    await sleep(Math.max(0, idleAt + 100 - Date.now()));
    await world.crashServer();
    const atCrash = world.trail(id);
    await world.startServer();
    // The next request for the project creates the instance, which loads the plugin and recovers.
    await world.waitForAudit(id, "injected", 30_000);
    // Killed before the plugin armed (the idle owed a look: armed after the restart) or after (the countdown resumed):
    // either way the whole trail, with one continuation.
    expect([[], ["armed"]]).toContainEqual(atCrash);
    expect(await world.trailAtRest(id, "skipped:todos_complete", 30_000)).toEqual(
      atCrash.length === 0
        ? ["armed", "fired", "injected", "skipped:todos_complete"]
        : ["armed", "resumed:restart", "fired", "injected", "skipped:todos_complete"],
    );
    expect(world.continuationRequests("restart")).toHaveLength(1);
    expect(world.injections(id)).toMatchObject([{ status: "sent" }]);
    console.log(
      `e2e OpenCode killed 100 ms after the idle: at the crash [${atCrash.join(", ")}]; after the restart [${world.trail(id).join(", ")}]`,
    );
  }, 120_000);
});

describe("a prompt call that always fails", () => {
  it("§1 never reaching OpenCode, 12 idles each after the longest backoff: maxRetries+1 calls, then skipped: gave_up at each idle", async () => {
    const port = await freePort();
    world = new E2E(script, false, { port });
    await world.start();
    proxy = new TcpProxy(port);
    const proxyPort = await proxy.start();
    proxy.refuseRequestsTo(/^POST \/session\/[^/]+\/prompt_async/);
    const retryMaxMs = 4000;
    const options = { countdownSeconds: 1, maxRetries: 3, retryBaseMs: 1000, retryMaxMs };
    services.push(await startService(world, `http://127.0.0.1:${proxyPort}`, options));

    const id = await world.session("basic");
    await world.prompt(id, "scenario: basic");
    const gaveUp = await world.waitForAudit(id, "injection_failed:gave_up", 60_000);
    expect(gaveUp.detail).toMatchObject({ attempt: 4, final: true });
    // OpenCode going idle again and again (an abort of an idle session publishes session.idle, nothing else): each
    // idle is judged, and held. Each comes a second after the longest backoff (and the error cooldown) would have
    // ended: the hold is a count of failures, not a window of time that runs out.
    const idles = 12;
    for (let i = 0; i < idles; i++) {
      const before = world.trail(id).length;
      await world.server.client.session.abort({ path: { id }, throwOnError: true });
      await world.waitForAudit(id, "skipped:gave_up", 20_000, before);
      await sleep(retryMaxMs + 1000);
    }
    expect(proxy.refused).toBe(4);
    expect(world.injections(id).map((i) => i.status)).toEqual(["failed", "failed", "failed", "failed"]);
    const failures = world.audit(id).filter((r) => r.event === "injection_failed");
    expect(failures.map((r) => `${r.reason}:${String(r.detail.attempt)}`)).toEqual([
      "retrying:1",
      "retrying:2",
      "retrying:3",
      "gave_up:4",
    ]);
    expect(world.trail(id).filter((t) => t === "skipped:gave_up").length).toBeGreaterThanOrEqual(idles);
    expect(world.continuationRequests("basic")).toEqual([]);
    console.log(`e2e always failing: ${proxy.refused} prompt calls over ${idles} idles`);
  }, 300_000);
});

describe("a continuation OpenCode accepts and never starts", () => {
  it("§5 the session's agent is gone after a restart: prompt_async answers 204, no turn starts → not_started, then no retry", async () => {
    const writer = { agent: { writer: { description: "Writes code", mode: "primary", prompt: "You write code." } } };
    world = new E2E(script, { countdownSeconds: 6, startTimeoutMs: 3000, maxRetries: 2 }, { config: writer });
    await world.start();
    const id = await world.session("not-started");
    await world.prompt(id, "scenario: not-started", "writer");
    await world.waitForAudit(id, "armed", 20_000);
    await world.crashServer();
    await world.startServer({ config: {} }); // the user removed the agent from the configuration
    const failed = await world.waitForAudit(id, "injection_failed:not_started", 30_000);
    expect(failed.detail).toMatchObject({ attempt: 1, retryInMs: expect.any(Number) });
    expect(world.injections(id)).toMatchObject([{ status: "sent", agent: "writer" }]);
    const messages = await world.messages(id);
    expect(messages.some((m) => m.parts.some((p) => String(p.text ?? "").includes("TODO CONTINUATION")))).toBe(false);
    // "Agent not found" is an error retrying cannot fix: the retry is not sent.
    await world.waitForAudit(id, "skipped:provider_error", 30_000);
    // The retry's countdown is armed, and at its end "Agent not found" stops it: nothing after that.
    expect(await world.trailAtRest(id, "skipped:provider_error")).toEqual([
      "armed",
      "resumed:restart",
      "fired",
      "injected",
      "injection_failed:not_started",
      "armed",
      "skipped:provider_error",
    ]);
    expect(world.injections(id)).toHaveLength(1);
    expect(world.continuationRequests("not-started")).toEqual([]);
    console.log(`e2e not started: ${world.trail(id).join(", ")}`);
  }, 120_000);
});
