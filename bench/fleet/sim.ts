// The simulated OpenCode servers in a process of their own (test/support/sim-opencode/main.ts), so that what they cost
// is apart from what the replicas cost: started paused (the replicas follow every server before the first turn), then
// `begin`, `freeze`, `stats` and `stop` over its stdin, each answer one JSON line on its stdout.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { SimServerInfo, SimStats } from "../../test/support/sim-opencode/fleet.js";
import { ROOT } from "../../test/crash/processes.js";

const MAIN = join(ROOT, "test", "support", "sim-opencode", "main.ts");

export interface SimLoad {
  servers: number;
  sessionsPerServer: number;
  todos: number;
  turnMs: number;
  latencyMs: number;
  /** The first turns end spread over this span after `begin`. */
  staggerMs: number;
  events: "full" | "lean";
}

type Line = { type: string } & Record<string, unknown>;

export class SimProcess {
  servers: SimServerInfo[] = [];
  private readonly waiting = new Map<string, Array<(line: Line) => void>>();
  private output = "";
  private readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    createInterface({ input: child.stdout! }).on("line", (text) => this.heard(text));
    child.stderr!.on("data", (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-20_000);
    });
  }

  static async start(load: SimLoad): Promise<SimProcess> {
    const args = [
      ["--servers", load.servers],
      ["--sessions", load.sessionsPerServer],
      ["--todos", load.todos],
      ["--turn-ms", load.turnMs],
      ["--latency-ms", load.latencyMs],
      ["--stagger-ms", load.staggerMs],
      ["--events", load.events],
    ].flatMap(([flag, value]) => [String(flag), String(value)]);
    // Node itself (tsx as its loader), not tsx's launcher: the pid is the process whose CPU is measured.
    const child = spawn(process.execPath, ["--import", "tsx", MAIN, ...args, "--paused"], {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const sim = new SimProcess(child);
    const ready = await sim.next("ready", 600_000);
    sim.servers = ready.servers as SimServerInfo[];
    return sim;
  }

  get pid(): number {
    return this.child.pid!;
  }

  private heard(text: string): void {
    let line: Line;
    try {
      line = JSON.parse(text) as Line;
    } catch {
      this.output = (this.output + `${text}\n`).slice(-20_000);
      return;
    }
    const waiters = this.waiting.get(line.type);
    if (line.type === "error") this.output += `${line.message as string}\n`;
    const resolve = waiters?.shift();
    if (resolve) resolve(line);
  }

  private next(type: string, timeoutMs: number): Promise<Line> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the simulated servers said no "${type}" in ${timeoutMs} ms: ${this.output}`)),
        timeoutMs,
      );
      const list = this.waiting.get(type) ?? [];
      list.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
      this.waiting.set(type, list);
      void this.exited.then((code) => reject(new Error(`the simulated servers exited (${code}): ${this.output}`)));
    });
  }

  private say(command: string): void {
    this.child.stdin!.write(`${command}\n`);
  }

  /** The first turns start (spread over the load's stagger). */
  begin(): void {
    this.say("begin");
  }

  /** Server `i` answers nothing and publishes nothing for `ms`. */
  freeze(i: number, ms: number): void {
    this.say(`freeze ${i} ${ms}`);
  }

  async stats(): Promise<SimStats> {
    const answer = this.next("stats", 60_000);
    this.say("stats");
    return (await answer) as unknown as SimStats;
  }

  /** Stops the servers; their last stats. */
  async stop(): Promise<SimStats | undefined> {
    if (this.child.exitCode !== null) return undefined;
    const final = this.next("final", 60_000).catch(() => undefined);
    this.say("stop");
    const stats = (await final) as unknown as SimStats | undefined;
    await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (this.child.exitCode === null) this.child.kill("SIGKILL");
    return stats;
  }
}
