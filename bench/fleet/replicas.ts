// The fleet's replicas: `todo-continuation serve --db postgres://… --listen 127.0.0.1:<port>` of the built CLI, each
// its own process with its log in a file, as test/e2e/support/fleet.ts starts them; their /metrics scraped, their CPU
// and memory read from /proc.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../../test/crash/processes.js";
import { freePort } from "../../test/e2e/support/tcp-proxy.js";
import { parseMetrics, type Scrape } from "./metrics.js";
import { cpuTicks, openFiles, rssBytes } from "./processes.js";

const BIN = join(ROOT, "dist", "cli", "main.js");

export interface ReplicaSettings {
  url: string;
  /** The enforcer's options (`--options`): the countdown, the lease. */
  options: Record<string, unknown>;
  /** Where the replicas' logs, home and working folder go. */
  folder: string;
  /** The first replica writes a CPU profile (node --cpu-prof) into the folder when it stops. */
  profile?: boolean;
}

/** What one replica looked like at a moment: its metrics, CPU so far, memory, open files. */
export interface ReplicaSnapshot {
  at: number;
  scrape: Scrape;
  cpuTicks: number;
  rssBytes: number;
  openFiles: number;
}

export class Replica {
  readonly exited: Promise<number | null>;
  /** The snapshot at the measured window's start (none when it started later: it counts from zero). */
  first: ReplicaSnapshot | undefined;
  /** The latest snapshot taken: at the window's end, or its last before it was killed. */
  last: ReplicaSnapshot | undefined;
  /** Its most memory seen. */
  peakRssBytes = 0;
  killed = false;

  private constructor(
    readonly index: number,
    readonly child: ChildProcess,
    readonly listen: string,
    readonly logFile: string,
    readonly startedAt: number,
  ) {
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  static async start(index: number, settings: ReplicaSettings): Promise<Replica> {
    if (!existsSync(BIN)) throw new Error("the CLI is not built: run `npm run build` first");
    const listen = `127.0.0.1:${await freePort()}`;
    const logFile = join(settings.folder, `replica-${index}.log`);
    const log = openSync(logFile, "a");
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: settings.folder, LANG: "C" };
    const profile = settings.profile && index === 0 ? ["--cpu-prof", "--cpu-prof-dir", settings.folder] : [];
    const args = [...profile, BIN, "serve", "--db", settings.url, "--options", JSON.stringify(settings.options)];
    const child = spawn(process.execPath, [...args, "--listen", listen, "--directory", settings.folder], {
      cwd: settings.folder,
      env,
      stdio: ["ignore", log, log],
    });
    closeSync(log);
    return new Replica(index, child, listen, logFile, Date.now());
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Its metrics, CPU and memory now; undefined when it does not answer (killed, frozen, busy past the timeout). */
  async snapshot(timeoutMs = 3000): Promise<ReplicaSnapshot | undefined> {
    if (!this.alive) return undefined;
    try {
      const response = await fetch(`http://${this.listen}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
      if (!response.ok) return undefined;
      const scrape = parseMetrics(await response.text());
      const snapshot = {
        at: Date.now(),
        scrape,
        cpuTicks: cpuTicks(this.pid),
        rssBytes: rssBytes(this.pid),
        openFiles: openFiles(this.pid),
      };
      this.peakRssBytes = Math.max(this.peakRssBytes, snapshot.rssBytes);
      this.last = snapshot;
      return snapshot;
    } catch {
      return undefined;
    }
  }

  kill(signal: NodeJS.Signals): void {
    if (signal === "SIGKILL") this.killed = true;
    this.child.kill(signal);
  }

  /** The log lines that say the replica was late or failing, counted by kind; and the first few of each. */
  troubles(): Record<string, { count: number; examples: string[] }> {
    const kinds: Record<string, RegExp> = {
      "round late": /fleet round \d+ ms late/,
      "round slow": /fleet round took \d+ ms/,
      "round failed (once a replica: the restart)": /fleet round failed/,
      "error lines": / ERROR /,
      "could not start following": /could not start following/,
    };
    const found: Record<string, { count: number; examples: string[] }> = {};
    const text = readFileSync(this.logFile, "utf8");
    for (const line of text.split("\n"))
      for (const [kind, pattern] of Object.entries(kinds))
        if (pattern.test(line)) {
          const entry = (found[kind] ??= { count: 0, examples: [] });
          entry.count++;
          if (entry.examples.length < 3) entry.examples.push(line.slice(0, 300));
        }
    return found;
  }

  async stop(): Promise<void> {
    if (!this.alive) return;
    this.child.kill("SIGCONT");
    this.child.kill("SIGTERM");
    const stopped = await Promise.race([
      this.exited.then(() => true),
      new Promise((resolve) => setTimeout(() => resolve(false), 15_000)),
    ]);
    if (!stopped) this.child.kill("SIGKILL");
  }
}
