// The standalone service (`todo-continuation serve`, the built CLI) following an OpenCode server from outside. Its own
// logic runs against the simulated OpenCode (test/support/sim-opencode, held to OpenCode 1.18.33 by
// test/e2e/sim-opencode.test.ts): it continues sessions from outside, survives the server being killed and restarted,
// a dropped connection (catching up on the idle it missed) and one that went silent without closing, backs off from a
// todo read that is not answered, authenticates with the server's password and never prints it. The plugin, hosted as
// OpenCode hosts it, shares its database: the two never both continue one idle. (A real OpenCode taking the service's
// continuations, with a password: test/e2e/faults.test.ts, the lost answer.)
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_BIN, requireBuiltCli } from "../support/cli.js";
import { SimPluginWorld } from "./support/sim-plugin-world.js";
import { SimWorld } from "./support/sim-world.js";
import { freePort, TcpProxy } from "./support/tcp-proxy.js";

const PASSWORD = "s3cret-for-the-e2e";
/** Just above OpenCode's 10 s heartbeat (the sim's too), so that a healthy stream is never replaced. */
const SILENCE_S = 15;

describe("the standalone service against a simulated OpenCode server without the plugin", () => {
  let world: SimWorld;
  let proxy: TcpProxy;
  let service: ChildProcess;
  let serviceLog = "";
  /** The service's status server (`--listen`): what a supervisor asks. */
  let status = "";
  const readyz = async () => {
    const res = await fetch(`${status}/readyz`, { signal: AbortSignal.timeout(5000) });
    return { status: res.status, body: await res.text() };
  };
  /** A failed wait says what the service logged up to the failure. */
  const withServiceLog = async <T>(wait: Promise<T>): Promise<T> => {
    try {
      return await wait;
    } catch (error) {
      (error as Error).message += `\nservice log tail:\n${serviceLog.slice(-3000)}`;
      throw error;
    }
  };

  beforeAll(async () => {
    requireBuiltCli();
    world = new SimWorld({ password: PASSWORD });
    await world.start();
    proxy = new TcpProxy(Number(new URL(world.server.url).port));
    const proxyPort = await proxy.start();
    status = `http://127.0.0.1:${await freePort()}`;
    service = spawn(
      process.execPath,
      [
        CLI_BIN,
        "serve",
        "--url",
        `http://127.0.0.1:${proxyPort}`,
        "--directory",
        world.project,
        "--db",
        world.dbPath,
        "--options",
        '{"countdownSeconds":1,"leaseMs":3000}',
        "--silence-timeout",
        String(SILENCE_S),
        "--listen",
        status.slice("http://".length),
      ],
      { env: { ...process.env, OPENCODE_SERVER_PASSWORD: PASSWORD }, stdio: ["ignore", "pipe", "pipe"] },
    );
    service.stdout!.on("data", (c: Buffer) => (serviceLog += c.toString()));
    service.stderr!.on("data", (c: Buffer) => (serviceLog += c.toString()));
    await world.waitFor(
      "the service to be connected to the server's event stream",
      () => /\bconnected to the event stream/.test(serviceLog),
      20_000,
    );
  }, 60_000);

  afterAll(async () => {
    service?.kill("SIGKILL");
    await proxy?.stop();
    await world?.stop();
  });

  it("continues a session from outside OpenCode", async () => {
    const id = await world.session("basic");
    await world.prompt(id, "scenario: basic");
    await world.waitForAudit(id, "injected", 20_000);
    await world.waitForAudit(id, "skipped:todos_complete", 20_000);
    expect(world.continuationsOf(id)).toBe(1);
    expect(world.injections(id)).toMatchObject([{ status: "sent", agent: "build", model: "scripted/model-1" }]);
    // The page beside the status and metrics on --listen (loopback: no token), the session on it.
    expect(serviceLog).toContain(`, the page on ${status}/`);
    const page = await (await fetch(`${status}/`, { signal: AbortSignal.timeout(5000) })).text();
    expect(page).toContain(`data-session="${id}"`);
    expect((await fetch(`${status}/metrics`, { signal: AbortSignal.timeout(5000) })).status).toBe(200);
  });

  it(
    "reconnects after the server is killed and restarted, and continues the next idle",
    { timeout: 60_000 },
    async () => {
      expect(await readyz()).toEqual({ status: 200, body: "ready\n" });
      const outages = serviceLog.split("; reconnecting (retrying every").length;
      await world.crashServer();
      // The service has seen the server go (its one line for an outage) before the server comes back.
      await withServiceLog(
        world.waitFor(
          "the service to notice the server gone",
          () => serviceLog.split("; reconnecting (retrying every").length > outages,
          20_000,
        ),
      );
      // Not ready while it can reach no OpenCode, and it says why.
      const down = await readyz();
      expect(down.status).toBe(503);
      expect(down.body).toMatch(/^not ready: OpenCode does not answer at http:\/\/127\.0\.0\.1:\d+ \(.+\)\n$/);
      await world.startServer();
      await withServiceLog(
        world.waitFor("the service to reconnect", () => serviceLog.includes("reconnected to the event stream"), 30_000),
      );
      console.log(serviceLog.match(/reconnected to the event stream.*/)?.[0]);
      expect(await readyz()).toEqual({ status: 200, body: "ready\n" });
      const id = await world.session("restart");
      await world.prompt(id, "scenario: restart");
      await world.waitForAudit(id, "injected", 20_000);
      await world.waitForAudit(id, "skipped:todos_complete", 20_000);
      expect(world.continuationsOf(id)).toBe(1);
    },
  );

  it("after a dropped connection, re-evaluates the session that went idle unseen", { timeout: 60_000 }, async () => {
    const id = await world.session("stop");
    proxy.cut();
    await world.prompt(id, "scenario: stop"); // the server runs the turn; the service hears nothing
    await world.waitFor("the turn to finish", () => world.turnsDone(id) >= 1);
    // The turn has ended (OpenCode says so, directly: its idle went out while the service was cut off).
    await world.waitFor("the turn to end", () => world.sessionIdle(id));
    expect(world.audit(id)).toEqual([]);
    proxy.restore();
    await world.waitForAudit(id, "injected", 30_000);
    const armed = world.audit(id).find((r) => r.event === "armed")!;
    expect(armed.detail.trigger).toBe("reevaluate");
    // The whole trail: the first decision is the re-evaluation after the reconnect; nothing came before it.
    expect(await withServiceLog(world.trailAtRest(id, "skipped:todos_complete", 30_000))).toEqual([
      "armed",
      "fired",
      "injected",
      "skipped:todos_complete",
    ]);
    expect(serviceLog).toMatch(/re-evaluating \d+ session\(s\) that changed while disconnected/);
  });

  it(
    "replaces an event stream that went silent without closing, and continues the idle it missed",
    { timeout: 90_000 },
    async () => {
      const reconnects = serviceLog.split("reconnected to the event stream").length;
      const id = await world.session("stop");
      proxy.silenceOpenConnections();
      await world.prompt(id, "scenario: stop"); // the service's stream carries none of this turn's events
      await withServiceLog(
        world.waitFor(
          "the service to notice the silence",
          () => serviceLog.includes(`no event from the server for ${SILENCE_S * 1000} ms`),
          SILENCE_S * 1000 + 20_000,
        ),
      );
      await withServiceLog(
        world.waitFor(
          "the service to reconnect",
          () => serviceLog.split("reconnected to the event stream").length > reconnects,
          20_000,
        ),
      );
      await world.waitForAudit(id, "injected", 30_000);
      expect(world.audit(id).find((r) => r.event === "armed")!.detail.trigger).toBe("reevaluate");
    },
  );

  it("a todo read that OpenCode does not answer is tried again after a backoff, then the session continues", async () => {
    const id = await world.session("expired");
    proxy.dropAnswersTo(/^GET \/session\/[^/ ]+\/todo\b/);
    await world.prompt(id, "scenario: expired");
    const skip = await world.waitForAudit(id, "skipped:todo_fetch_failed", 30_000);
    expect(skip.detail).toMatchObject({ attempt: 1, retryInMs: 5000 });
    proxy.dropAnswersTo(undefined);
    await world.waitForAudit(id, "injected", 30_000);
    await world.waitForAudit(id, "skipped:todos_complete", 20_000);
    expect(world.audit(id).find((r) => r.event === "armed")!.detail.trigger).toBe("recheck");
    expect(world.continuationsOf(id)).toBe(1);
    expect(proxy.dropped).toBeGreaterThan(0);
  });

  it("stops cleanly on SIGTERM, releasing its leases, and never printed the password", async () => {
    const exited = new Promise<number | null>((resolve) => service.once("exit", (code) => resolve(code)));
    service.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(serviceLog).toContain("SIGTERM: stopping, releasing leases");
    expect(serviceLog).not.toContain(PASSWORD);
    expect(serviceLog).not.toContain(Buffer.from(`opencode:${PASSWORD}`).toString("base64"));
  });
});

describe("the standalone service and the plugin on one database", () => {
  // The plugin in a Bun process hosted as OpenCode hosts it, on the simulated server: what is proven is the two
  // enforcers' sharing of one database, not OpenCode's loading of the plugin (plugin.test.ts has that).
  let world: SimPluginWorld;
  let service: ChildProcess;
  let serviceLog = "";

  beforeAll(async () => {
    requireBuiltCli();
    world = new SimPluginWorld({ countdownSeconds: 1 }, { todos: 3 });
    await world.start();
    service = spawn(
      process.execPath,
      [
        CLI_BIN,
        "serve",
        "--url",
        world.server.url,
        "--directory",
        world.project,
        "--db",
        world.dbPath,
        "--options",
        '{"countdownSeconds":1}',
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    service.stderr!.on("data", (c: Buffer) => (serviceLog += c.toString()));
    await world.waitFor(
      "the service to be connected to the server's event stream",
      () => /\bconnected to the event stream/.test(serviceLog),
      20_000,
    );
  }, 90_000);

  afterAll(async () => {
    service?.kill("SIGKILL");
    await world?.stop();
  });

  it("never both continue the same idle", { timeout: 90_000 }, async () => {
    const id = await world.session("shared");
    await world.prompt(id, "scenario: shared");
    // Both processes judge every idle, the last one too: the decision closes with both its skips, then rest.
    await world.waitFor(
      () => `both processes' closing skips (trail so far: ${world.trail(id).join(", ")})`,
      () => world.trail(id).filter((t) => t === "skipped:todos_complete").length >= 2,
      60_000,
    );
    const trail = await world.trailAtRest(id, "skipped:todos_complete");
    // One arms each eligible idle and the other defers to its countdown (in_flight, counted below: before or after
    // the fire, as its reads of OpenCode took) or, when its read of OpenCode came after the continuation had started,
    // to the busy session (busy); apart from those deferrals, the whole trail.
    const continued = ["armed", "fired", "injected"];
    const deferrals = ["skipped:in_flight", "skipped:busy"];
    expect(trail.filter((t) => !deferrals.includes(t))).toEqual([
      ...continued,
      ...continued,
      ...continued,
      "skipped:todos_complete",
      "skipped:todos_complete",
    ]);
    // Both processes saw every idle; the database let exactly one of them send each continuation.
    expect(world.continuationsOf(id)).toBe(3);
    const injections = world.injections(id);
    expect(injections).toHaveLength(3);
    const fired = world.audit(id).filter((r) => r.event === "fired");
    expect(fired).toHaveLength(3);
    // The second process to see an idle defers to the first one's countdown instead of superseding it.
    const deferred = (reason: string) => world.audit(id).filter((r) => r.event === "skipped" && r.reason === reason);
    expect(deferred("in_flight").length).toBeGreaterThanOrEqual(2);
    expect(deferred("in_flight").length + deferred("busy").length).toBeGreaterThanOrEqual(3);
    expect(world.trail(id)).not.toContain("cancelled:superseded");
    console.log(
      `plugin + service on one file: ${world.trail(id).join(", ")}; senders: ${injections.map((i) => String(i.owner).split("/")[1]).join(", ")}`,
    );
  });
});
