// A real Prometheus (Debian's `prometheus` package) on a loopback port, for the tests: it runs the package's shipped
// scrape configuration and alerting rules (deploy/prometheus), with the test's targets and a scrape interval short
// enough for a test, and answers queries through its HTTP API.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../e2e/support/tcp-proxy.js";
import { ROOT } from "../crash/processes.js";
import { waitFor } from "./wait-for.js";

const SHIPPED = join(ROOT, "deploy", "prometheus");

export interface Sample {
  metric: Record<string, string>;
  value: number;
}

export interface Alert {
  labels: Record<string, string>;
  state: "pending" | "firing";
}

export class PrometheusServer {
  private constructor(
    private readonly process: ChildProcess,
    private readonly folder: string,
    readonly url: string,
    private readonly log: string[],
  ) {}

  /**
   * The shipped prometheus.yml with `targets` as its job's targets and every interval set to `intervalSeconds`, the
   * shipped alerts.yml as its rules. Fails (never skips) when Prometheus is not installed.
   */
  static async start(targets: string[], intervalSeconds = 1): Promise<PrometheusServer> {
    const folder = mkdtempSync(join(tmpdir(), "tc-prometheus-"));
    const shipped = readFileSync(join(SHIPPED, "prometheus.yml"), "utf8");
    const config = shipped
      .replace(/(scrape_interval|evaluation_interval): \S+/g, `$1: ${intervalSeconds}s`)
      .replace(/- alerts\.yml/, `- ${join(SHIPPED, "alerts.yml")}`)
      .replace(
        /targets:\n(\s+)- \S+/,
        (_, indent: string) => `targets:\n${targets.map((t) => `${indent}- ${t}`).join("\n")}`,
      );
    if (!targets.every((t) => config.includes(`- ${t}`)))
      throw new Error("the shipped prometheus.yml has no targets list");
    writeFileSync(join(folder, "prometheus.yml"), config);
    const port = await freePort();
    const log: string[] = [];
    const child = spawn(
      "prometheus",
      [
        `--config.file=${join(folder, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(folder, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    child.stderr!.on("data", (chunk: Buffer) => log.push(chunk.toString()));
    const failed = new Promise<never>((_, reject) => {
      child.once("error", (error) =>
        reject(
          new Error(
            `prometheus could not start (apt-get install prometheus; npm test's pretest does): ${error.message}`,
          ),
        ),
      );
      child.once("exit", (code) => reject(new Error(`prometheus exited (${code}):\n${log.join("")}`)));
    });
    const server = new PrometheusServer(child, folder, `http://127.0.0.1:${port}`, log);
    await Promise.race([server.untilReady(), failed]);
    return server;
  }

  private async untilReady(): Promise<void> {
    const ready = () =>
      fetch(`${this.url}/-/ready`).then(
        (res) => res.ok,
        () => false, // not listening yet
      );
    await waitFor("prometheus ready", ready, { timeoutMs: 30_000, interval: 100, report: () => this.log.join("") });
  }

  private async api<T>(path: string): Promise<T> {
    const res = await fetch(`${this.url}/api/v1/${path}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== "success") throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
    return body.data;
  }

  /** An instant query's samples. */
  async query(expr: string): Promise<Sample[]> {
    const data = await this.api<{ result: Array<{ metric: Record<string, string>; value: [number, string] }> }>(
      `query?query=${encodeURIComponent(expr)}`,
    );
    return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  }

  async alerts(): Promise<Alert[]> {
    return (await this.api<{ alerts: Alert[] }>("alerts")).alerts;
  }

  /** Asks `probe` every half second until it answers something (or fails after `timeoutMs`). */
  until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
    return waitFor(`prometheus: ${what}`, probe, { timeoutMs, interval: 500 });
  }

  async stop(): Promise<void> {
    if (this.process.exitCode === null) {
      const exited = new Promise((resolve) => this.process.once("exit", resolve));
      this.process.kill("SIGTERM");
      await exited;
    }
    rmSync(this.folder, { recursive: true, force: true });
  }
}
