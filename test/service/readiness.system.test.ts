// `serve --listen` as a supervisor and a monitoring stack see it, on a real PostgreSQL server: the built CLI runs the
// service; /readyz says 503 with the reason once the database stops, and 200 again once it is back, while /healthz
// stays 200 (the process is alive, it only cannot work); a real Prometheus, with the shipped scrape configuration and
// rules, scrapes it and sees the same. It follows a real OpenCode server (without the plugin): readiness also needs
// OpenCode to answer (test/e2e/service.test.ts says 503 while it does not).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OpenCodeServer } from "../e2e/support/opencode-server.js";
import { ScriptedModel } from "../e2e/support/scripted-model.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../e2e/support/tcp-proxy.js";
import { CLI_BIN, requireBuiltCli } from "../support/cli.js";
import { PostgresServer } from "../support/postgres.js";
import { PrometheusServer } from "../support/prometheus.js";
import { waitFor } from "../support/wait-for.js";

let postgres: PostgresServer;
let prometheus: PrometheusServer | undefined;
const model = new ScriptedModel(() => ({ text: "ok" }));
const root = mkdtempSync(join(tmpdir(), "tc-ready-"));
let opencode: OpenCodeServer | undefined;
let service: ChildProcess | undefined;
let status = "";
const log: string[] = [];

beforeAll(async () => {
  requireBuiltCli();
  postgres = await PostgresServer.start();
  const db = await postgres.createDatabase("tc_ready");
  const listen = await freePort();
  opencode = new OpenCodeServer({ root, modelUrl: await model.start(), pluginOptions: false });
  await opencode.start();
  status = `http://127.0.0.1:${listen}`;
  service = spawn(
    process.execPath,
    [
      CLI_BIN,
      "--db",
      db,
      "serve",
      "--url",
      opencode.url,
      "--directory",
      opencode.project,
      "--listen",
      `127.0.0.1:${listen}`,
      "--log-format",
      "json",
      "--options",
      JSON.stringify({ leaseMs: 3000, hostTimeoutMs: 1000 }),
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  service.stderr!.on("data", (chunk: Buffer) => log.push(chunk.toString()));
  service.once("exit", (code, signal) => log.push(`(the service exited: ${code ?? signal})\n`));
  prometheus = await PrometheusServer.start([`127.0.0.1:${listen}`]);
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  if (service && service.exitCode === null) {
    const exited = new Promise((resolve) => service!.once("exit", resolve));
    service.kill("SIGTERM");
    await exited;
  }
  await postgres?.destroy();
  await opencode?.stop();
  await model.stop();
  rmSync(root, { recursive: true, force: true });
});

async function get(path: string): Promise<{ status: number; body: string } | undefined> {
  try {
    const res = await fetch(`${status}${path}`, { signal: AbortSignal.timeout(5000) });
    return { status: res.status, body: await res.text() };
  } catch {
    return undefined; // not listening yet
  }
}

/** Asks `path` until its answer has `want` (or fails after `timeoutMs`, with the service's log). */
async function answered(path: string, want: number, timeoutMs = 30_000): Promise<string> {
  let last: { status: number; body: string } | undefined;
  const answer = await waitFor(
    () => `${path} to answer ${want} (last: ${JSON.stringify(last)})`,
    async () => {
      last = await get(path);
      return last?.status === want && last;
    },
    { timeoutMs, interval: 200, report: () => `log:\n${log.join("")}` },
  );
  return answer.body;
}

describe("serve --listen on PostgreSQL", () => {
  it("/readyz follows the database: 200, 503 with the reason while it is stopped, 200 once it is back", async () => {
    expect(await answered("/readyz", 200)).toBe("ready\n");
    // Prometheus scrapes it: up, and ready.
    const ready = (value: number) => async () => {
      const [sample] = await prometheus!.query('todo_continuation_ready{job="todo-continuation"}');
      return sample?.value === value ? sample : undefined;
    };
    await prometheus!.until("the replica ready", ready(1));
    expect(await prometheus!.query('up{job="todo-continuation"}')).toMatchObject([{ value: 1 }]);
    postgres.stop("fast");
    const reason = await answered("/readyz", 503);
    expect(reason).toMatch(/^not ready: the database does not answer/);
    expect((await get("/healthz"))?.status).toBe(200);
    const metrics = await get("/metrics");
    expect(metrics?.body).toMatch(/^todo_continuation_ready 0$/m);
    await prometheus!.until("the replica not ready", ready(0));
    // The alert begins (pending: it fires after 2 minutes of this).
    const pending = await prometheus!.until("the not-ready alert", async () =>
      (await prometheus!.alerts()).find((a) => a.labels.alertname === "TodoContinuationNotReady"),
    );
    expect(pending.state).toBe("pending");
    postgres.start();
    expect(await answered("/readyz", 200)).toBe("ready\n");
    expect((await get("/metrics"))?.body).toMatch(/^todo_continuation_ready 1$/m);
    await prometheus!.until("the replica ready again", ready(1));
    // One JSON object a line, the outage among them.
    const lines = log
      .join("")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { level: string; message: string });
    expect(lines.some((l) => l.message.includes("status and metrics on"))).toBe(true);
  }, 120_000);
});
