// The standalone service's start and stop, on a SQLite file, against a stand-in for OpenCode's event stream (one
// `server.connected` event, then an open stream): what is under test is that a start and a stop happen once each
// whoever asks and when, and that it stops what it started (its event stream and catch-up, then its engine), not what
// the engine decides.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resolveConfig, type Config } from "../../src/config/resolve.js";
import { StandaloneService, type ServiceOptions } from "../../src/service/standalone.js";
import { openStore } from "../../src/store/open/open.js";
import { gateHeartbeats } from "../support/store-spies.js";
import { tempFolder } from "../support/temp-folders.js";

/**
 * Answers `/event` with an open stream whose first event says it connected; counts the streams asked for. A listing of
 * the sessions (`/session`) is never answered: `listed` resolves once one is asked for.
 */
class EventStreamServer {
  subscriptions = 0;
  private readonly open = new Set<ServerResponse>();
  private sessionsAsked!: () => void;
  readonly listed = new Promise<void>((resolve) => (this.sessionsAsked = resolve));
  private readonly server = createServer((req, res) => {
    if (req.url?.startsWith("/session")) {
      this.open.add(res);
      return this.sessionsAsked();
    }
    if (!req.url?.startsWith("/event")) return void res.writeHead(404).end();
    this.subscriptions++;
    this.open.add(res);
    res.on("close", () => this.open.delete(res));
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(`data: ${JSON.stringify({ type: "server.connected", properties: {} })}\n\n`);
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A service on a fresh database, following a fresh event stream; `logged(line)` resolves once it logs that line, and
 * `lines` holds every line it logged.
 */
async function aService(options: Partial<ServiceOptions> = {}, config: Partial<Config> = {}) {
  const opencode = new EventStreamServer();
  const url = await opencode.start();
  cleanups.push(() => opencode.close());
  const databasePath = join(tempFolder(), "tc.db");
  const store = await openStore(databasePath, { kind: "service" });
  cleanups.push(() => store.close());
  const resolved = resolveConfig({ databasePath, ...config }, {});
  const waiting = new Map<string, () => void>();
  const lines: string[] = [];
  const logged = (line: string) => new Promise<void>((resolve) => waiting.set(line, resolve));
  const log = (_level: unknown, message: string) => {
    lines.push(message);
    waiting.get(message)?.();
  };
  const service = new StandaloneService({ url, directory: "/workspace", config: resolved, store, log, ...options });
  cleanups.push(() => service.stop());
  return { service, store, opencode, logged, lines };
}

describe("the standalone service's start and stop", () => {
  it("starts once however often start() is called: one event stream followed", async () => {
    const { service, opencode, logged } = await aService();
    const connected = logged("connected to the event stream");
    const first = service.start();
    const second = service.start();
    await Promise.all([first, second]);
    await connected;
    const modeWhileConnected = service.mode;
    await service.stop();
    // The same start, and one follower of the event stream (not one per call).
    expect(second).toBe(first);
    expect(opencode.subscriptions).toBe(1);
    expect(modeWhileConnected).toBe("streaming");
  });

  it("a second stop() during a stop resolves only once the service is stopped, as the first does", async () => {
    const { service } = await aService();
    await service.start();
    const first = service.stop();
    const second = service.stop();
    const seenBySecond = await second.then(() => [service.enforcer.stats().mode, service.mode]);
    expect(seenBySecond).toEqual(["disposed", "stopped"]);
    expect(second).toBe(first);
    await first;
  });

  it("a stop() during a start waits for the start, then stops, and follows nothing", async () => {
    const { service, store, opencode } = await aService();
    // The engine's start says it is alive first: held until the gate opens.
    const heartbeat = gateHeartbeats(store);
    const settled: string[] = [];
    const started = service.start().then(() => settled.push("started"));
    const modes = [service.mode];
    const stopped = service.stop().then(() => settled.push("stopped"));
    modes.push(service.mode);
    heartbeat.open();
    await Promise.all([started, stopped]);
    expect(settled).toEqual(["started", "stopped"]);
    // Nothing the start began outlives the stop: no timer of the engine's, no event stream.
    expect(service.enforcer.stats()).toMatchObject({ mode: "disposed", timers: 0 });
    expect(opencode.subscriptions).toBe(0);
    expect([...modes, service.mode]).toEqual(["starting", "stopping", "stopped"]);
  });

  it("takes its fleet replica's lease ticks only once its start is over, and not once a stop is asked", async () => {
    const { service } = await aService();
    const ticking = [service.ticking];
    const started = service.start();
    // Starting: its engine recovers its scope by its own reads; rows handed to it now would be acted on twice.
    ticking.push(service.ticking);
    await started;
    ticking.push(service.ticking);
    const stopped = service.stop();
    ticking.push(service.ticking);
    await stopped;
    ticking.push(service.ticking);
    expect(ticking).toEqual([false, false, true, false, false]);
  });

  it("stops its catch-up before its engine: a listing of the sessions under way is given up, and not reported", async () => {
    // A listing left to its own limit would hold the stop for the whole of it.
    const { service, opencode, lines } = await aService({ catchUpSince: 0 }, { hostTimeoutMs: 600_000 });
    await service.start();
    await opencode.listed;
    await service.stop();
    expect(service.enforcer.stats().mode).toBe("disposed");
    expect(lines.filter((line) => line.startsWith("could not list sessions"))).toEqual([]);
  });

  it("refuses to start again once stopped, whether it had started or not", async () => {
    const started = (await aService()).service;
    await started.start();
    await started.stop();
    await expect(started.start()).rejects.toThrow(/was stopped: it cannot start again/);
    const never = (await aService()).service;
    await never.stop();
    expect(never.mode).toBe("stopped");
    await expect(never.start()).rejects.toThrow(/was stopped: it cannot start again/);
  });
});
