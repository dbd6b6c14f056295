// Never twice and nothing lost, with the enforcer outside OpenCode (the standalone service, the built CLI) so that a
// real fault can sit on the wire between them: an answer lost after a real OpenCode took the prompt (its real
// prompt_async and its messages, where the continuation is found by its id), and, against the simulated OpenCode
// (test/support/sim-opencode, held to the real one by test/e2e/sim-opencode.test.ts), a crash of the enforcer while it
// reads OpenCode after an idle and a prompt call that always fails. Also a real OpenCode with the plugin inside killed
// 100 ms after an idle, and a continuation it accepts and never starts.
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CLI_BIN, requireBuiltCli } from "../support/cli.js";
import { sleep } from "../support/wait-for.js";
import { E2E } from "./support/harness.js";
import { SimWorld } from "./support/sim-world.js";
import { freePort, TcpProxy } from "./support/tcp-proxy.js";
import type { ApiWorld } from "./support/world.js";
import { script } from "./scenarios.js";

interface Service {
  child: ChildProcess;
  log: () => string;
}

/** The service following `url` for `directory`'s sessions, on the world's database. */
function startService(
  world: ApiWorld,
  url: string,
  directory: string,
  options: Record<string, unknown>,
  env: Record<string, string> = {},
): Promise<Service> {
  requireBuiltCli();
  let log = "";
  const child = spawn(
    process.execPath,
    [
      CLI_BIN,
      "serve",
      "--url",
      url,
      "--directory",
      directory,
      "--db",
      world.dbPath,
      "--options",
      JSON.stringify(options),
    ],
    { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
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
async function nextIdle(world: ApiWorld, sessionId: string, signal: AbortSignal): Promise<number> {
  const events = await world.client.event.subscribe({ signal });
  for await (const event of events.stream as AsyncIterable<{ type: string; properties: { sessionID?: string } }>) {
    if (event.type === "session.idle" && event.properties.sessionID === sessionId) return Date.now();
  }
  throw new Error("the event stream ended before the idle");
}

/** A proxy in front of a simulated server's port. */
async function proxied(sim: SimWorld): Promise<string> {
  proxy = new TcpProxy(Number(new URL(sim.server.url).port));
  return `http://127.0.0.1:${await proxy.start()}`;
}

let world: E2E | SimWorld | undefined;
let proxy: TcpProxy | undefined;
const services: Service[] = [];

afterEach(async () => {
  for (const service of services.splice(0)) await kill(service);
  await proxy?.stop();
  await world?.stop();
  proxy = undefined;
  world = undefined;
});

const PASSWORD = "s3cret-for-the-e2e";

describe("an answer lost between the enforcer and a real OpenCode server", () => {
  it("§1 the answer to the prompt call is lost after OpenCode took it: found by its id, exactly one continuation", async () => {
    const port = await freePort();
    // With OpenCode's password: the real server authenticates the service.
    world = new E2E(script, false, { port, password: PASSWORD });
    await world.start();
    proxy = new TcpProxy(port);
    const proxyPort = await proxy.start();
    proxy.dropAnswersTo(/^POST \/session\/[^/]+\/prompt_async/);
    const url = `http://127.0.0.1:${proxyPort}`;
    const env = { OPENCODE_SERVER_PASSWORD: PASSWORD };
    services.push(await startService(world, url, world.server.project, { countdownSeconds: 1 }, env));

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
});

describe("faults between the enforcer and a simulated OpenCode server", () => {
  it("§6 the enforcer dies 100 ms after an idle while it reads OpenCode: after its restart, exactly one continuation", async () => {
    const sim = (world = new SimWorld());
    await sim.start();
    const url = await proxied(sim);
    // Every read takes 2 s: the enforcer is still gathering its facts when it is killed.
    proxy!.slowDown(2000);
    services.push(await startService(sim, url, sim.project, { countdownSeconds: 1, hostTimeoutMs: 10_000 }));

    const id = await sim.session("basic");
    const watching = new AbortController();
    const idle = nextIdle(sim, id, watching.signal);
    await sim.prompt(id, "scenario: basic");
    const idleAt = await idle;
    watching.abort();
    // Killed once the idle is written as owed (`recheck_at`: a state, not a time) and at least 100 ms after it, while
    // its reads, slowed to 2 s each, are under way: where the scenario crashes. A kill at a fixed 100 ms landed before
    // the write on a loaded machine, and the case then proved nothing of the look owed across a crash.
    await sim.waitFor("the idle written as owed", () => sim.owed(id).recheckAt !== null, 60_000);
    await sleep(Math.max(0, idleAt + 100 - Date.now()));
    await kill(services.pop());
    const killedAfter = Date.now() - idleAt;
    // The idle is in the database (owed a look), nothing was decided yet.
    expect(sim.audit(id)).toEqual([]);
    expect(sim.countdowns(id)).toEqual([]);
    expect(sim.owed(id).recheckAt).not.toBeNull();

    proxy!.slowDown(0);
    services.push(await startService(sim, url, sim.project, { countdownSeconds: 1 }));
    const armed = await sim.waitForAudit(id, "armed", 30_000);
    expect(armed.detail).toMatchObject({ trigger: "restart" });
    expect(await sim.trailAtRest(id, "skipped:todos_complete", 30_000)).toEqual([
      "armed",
      "fired",
      "injected",
      "skipped:todos_complete",
    ]);
    expect(sim.continuationsOf(id)).toBe(1);
    expect(sim.injections(id)).toMatchObject([{ status: "sent" }]);
    console.log(
      `e2e crash after idle: enforcer killed ${killedAfter} ms after the idle; after its restart: ${sim.trail(id).join(", ")}`,
    );
  }, 120_000);
});

describe("a prompt call that always fails", () => {
  it("§1 never reaching OpenCode, 12 idles each after the longest backoff: maxRetries+1 calls, then skipped: gave_up at each idle", async () => {
    const sim = (world = new SimWorld());
    await sim.start();
    const url = await proxied(sim);
    proxy!.refuseRequestsTo(/^POST \/session\/[^/]+\/prompt_async/);
    // Short backoffs and cooldown: what is held is a count of failures, whatever the lengths of time.
    const retryMaxMs = 1000;
    const options = { countdownSeconds: 1, maxRetries: 3, retryBaseMs: 250, errorCooldownMs: 250, retryMaxMs };
    services.push(await startService(sim, url, sim.project, options));

    const id = await sim.session("basic");
    await sim.prompt(id, "scenario: basic");
    const gaveUp = await sim.waitForAudit(id, "injection_failed:gave_up", 60_000);
    expect(gaveUp.detail).toMatchObject({ attempt: 4, final: true });
    // OpenCode going idle again and again (what an abort of an idle session publishes: session.idle, nothing else): each
    // idle is judged, and held. Each comes a second after the longest backoff (and the error cooldown) would have
    // ended: the hold is a count of failures, not a window of time that runs out.
    const idles = 12;
    for (let i = 0; i < idles; i++) {
      const before = sim.trail(id).length;
      sim.idleAgain(id);
      await sim.waitForAudit(id, "skipped:gave_up", 20_000, before);
      await sleep(retryMaxMs + 1000);
    }
    expect(proxy!.refused).toBe(4);
    expect(sim.injections(id).map((i) => i.status)).toEqual(["failed", "failed", "failed", "failed"]);
    const failures = sim.audit(id).filter((r) => r.event === "injection_failed");
    expect(failures.map((r) => `${r.reason}:${String(r.detail.attempt)}`)).toEqual([
      "retrying:1",
      "retrying:2",
      "retrying:3",
      "gave_up:4",
    ]);
    expect(sim.trail(id).filter((t) => t === "skipped:gave_up").length).toBeGreaterThanOrEqual(idles);
    expect(sim.continuationsOf(id)).toBe(0);
    console.log(`e2e always failing: ${proxy!.refused} prompt calls over ${idles} idles`);
  }, 120_000);
});

// One real OpenCode with the plugin inside for both: its countdown (6 s) leaves the crash of the last case time to land
// while armed; an agent the last case removes (its restart runs without it, so it comes last).
describe("a real OpenCode with the plugin inside, killed and started again", () => {
  const writer = { agent: { writer: { description: "Writes code", mode: "primary", prompt: "You write code." } } };
  let plugin: E2E;

  beforeAll(async () => {
    plugin = new E2E(script, { countdownSeconds: 6, startTimeoutMs: 3000, maxRetries: 2 }, { config: writer });
    await plugin.start();
  }, 90_000);

  afterAll(async () => {
    await plugin?.stop();
  });

  it("§6 OpenCode (with the plugin) killed 100 ms after an idle: after its restart, exactly one continuation", async () => {
    const id = await plugin.session("restart");
    const watching = new AbortController();
    const idle = nextIdle(plugin, id, watching.signal);
    await plugin.prompt(id, "scenario: restart");
    const idleAt = await idle;
    watching.abort();
    // Killed 100 ms after the idle: where the scenario crashes, not a wait for an outcome.
    await sleep(Math.max(0, idleAt + 100 - Date.now()));
    await plugin.crashServer();
    const atCrash = plugin.trail(id);
    await plugin.startServer();
    // The next request for the project creates the instance, which loads the plugin and recovers.
    await plugin.waitForAudit(id, "injected", 30_000);
    // Killed before the plugin armed (the idle owed a look: armed after the restart) or after (the countdown resumed):
    // either way the whole trail, with one continuation.
    expect([[], ["armed"]]).toContainEqual(atCrash);
    expect(await plugin.trailAtRest(id, "skipped:todos_complete", 30_000)).toEqual(
      atCrash.length === 0
        ? ["armed", "fired", "injected", "skipped:todos_complete"]
        : ["armed", "resumed:restart", "fired", "injected", "skipped:todos_complete"],
    );
    expect(plugin.continuationRequests("restart")).toHaveLength(1);
    expect(plugin.injections(id)).toMatchObject([{ status: "sent" }]);
    console.log(
      `e2e OpenCode killed 100 ms after the idle: at the crash [${atCrash.join(", ")}]; after the restart [${plugin.trail(id).join(", ")}]`,
    );
  }, 120_000);

  // Last: it restarts OpenCode without the writer agent.
  it("§5 the session's agent is gone after a restart: prompt_async answers 204, no turn starts → not_started, then no retry", async () => {
    const id = await plugin.session("not-started");
    await plugin.prompt(id, "scenario: not-started", "writer");
    await plugin.waitForAudit(id, "armed", 20_000);
    await plugin.crashServer();
    await plugin.startServer({ config: {} }); // the user removed the agent from the configuration
    const failed = await plugin.waitForAudit(id, "injection_failed:not_started", 30_000);
    expect(failed.detail).toMatchObject({ attempt: 1, retryInMs: expect.any(Number) });
    expect(plugin.injections(id)).toMatchObject([{ status: "sent", agent: "writer" }]);
    const messages = await plugin.messages(id);
    expect(messages.some((m) => m.parts.some((p) => String(p.text ?? "").includes("TODO CONTINUATION")))).toBe(false);
    // "Agent not found" is an error retrying cannot fix: the retry is not sent.
    await plugin.waitForAudit(id, "skipped:provider_error", 30_000);
    // The retry's countdown is armed, and at its end "Agent not found" stops it: nothing after that.
    expect(await plugin.trailAtRest(id, "skipped:provider_error")).toEqual([
      "armed",
      "resumed:restart",
      "fired",
      "injected",
      "injection_failed:not_started",
      "armed",
      "skipped:provider_error",
    ]);
    expect(plugin.injections(id)).toHaveLength(1);
    expect(plugin.continuationRequests("not-started")).toEqual([]);
    console.log(`e2e not started: ${plugin.trail(id).join(", ")}`);
  }, 120_000);
});
