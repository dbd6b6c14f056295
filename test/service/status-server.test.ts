// What a supervisor and Prometheus get from `serve --listen`, over real HTTP on loopback: liveness, readiness with its
// reason, the exposition with Prometheus's content type; and how --listen is read.
import { afterEach, describe, expect, it } from "vitest";
import { Metrics, METRIC_PREFIX } from "../../src/service/metrics.js";
import { parseListen, startStatusServer, type Readiness, type StatusServer } from "../../src/service/status-server.js";

let server: StatusServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(state: { alive: boolean; ready: Readiness }) {
  const metrics = new Metrics(() => ({ armed: 2, paused: 0, serversFollowed: 1 }));
  server = await startStatusServer(
    { host: "127.0.0.1", port: 0 },
    { metrics, alive: () => state.alive, ready: async () => state.ready },
  );
  const get = async (path: string) => {
    const res = await fetch(`${server!.url}${path}`);
    return { status: res.status, type: res.headers.get("content-type"), body: await res.text() };
  };
  return { get };
}

describe("the status server", () => {
  it("says alive and ready, and serves the metrics in Prometheus's text format", async () => {
    const { get } = await start({ alive: true, ready: { ready: true } });
    expect(server!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await get("/healthz")).toMatchObject({ status: 200, body: "ok\n" });
    expect(await get("/livez")).toMatchObject({ status: 200 });
    expect(await get("/readyz")).toMatchObject({ status: 200, body: "ready\n" });
    const metrics = await get("/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(metrics.body).toContain(`${METRIC_PREFIX}countdowns_armed 2`);
    expect(metrics.body).toContain(`${METRIC_PREFIX}process_cpu_seconds_total`);
    expect((await get("/nothing")).status).toBe(404);
  });

  it("not ready: 503 with the reason on one line; stopping: not alive either", async () => {
    const state = { alive: true, ready: { ready: false, reason: "the database does not answer: refused" } };
    const { get } = await start(state);
    expect(await get("/readyz")).toMatchObject({
      status: 503,
      body: "not ready: the database does not answer: refused\n",
    });
    expect((await get("/healthz")).status).toBe(200);
    state.alive = false;
    expect(await get("/healthz")).toMatchObject({ status: 503, body: "stopping\n" });
  });
});

describe("--listen", () => {
  it.each([
    ["9464", { host: "127.0.0.1", port: 9464 }],
    [":9464", { host: "127.0.0.1", port: 9464 }],
    ["127.0.0.1:9464", { host: "127.0.0.1", port: 9464 }],
    ["0.0.0.0:9100", { host: "0.0.0.0", port: 9100 }],
    ["[::1]:9464", { host: "::1", port: 9464 }],
    ["localhost:0", { host: "localhost", port: 0 }],
  ])("%s", (text, listen) => {
    expect(parseListen(text)).toEqual(listen);
  });

  it.each(["", "host:", "9464:host", "127.0.0.1:70000", "a:b:c"])("refuses %j with the form it takes", (text) => {
    expect(() => parseListen(text)).toThrow(/--listen takes \[host\]:port/);
  });
});
