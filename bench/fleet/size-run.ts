// One size of the fleet benchmark, from an empty PostgreSQL to its figures: the simulated servers (paused), their rows
// in `servers`, N replicas sharing them, then the first turns spread over the warm-up and the measured window; in the
// window a kill, a freeze and a database restart; then the run drains until every session is finished (or stops
// moving), and the verdict is taken from the simulated servers and from the rows.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../src/store/open/open.js";
import { BenchDatabase, type DatabaseCounters } from "./database.js";
import { freezeOne, killOne, restartDatabase, type FleetUnderTest, type Restart, type Takeover } from "./faults.js";
import { Replica, type ReplicaSettings, type ReplicaSnapshot } from "./replicas.js";
import { cpuTicks, machineTicks, rssBytes } from "./processes.js";
import { atRest, followed, owners } from "./rows.js";
import { SimProcess } from "./sim.js";
import type { SimStats } from "../../test/support/sim-opencode/fleet.js";

export interface SizeSpec {
  replicas: number;
  servers: number;
  /** Sessions in all (spread evenly over the servers). */
  sessions: number;
}

export interface RunSettings {
  seconds: number;
  warmupSeconds: number;
  leaseMs: number;
  countdownSeconds: number;
  turnMs: number;
  todos: number;
  events: "full" | "lean";
  latencyMs: number;
  dbDownMs: number;
  /** The drain gives up once nothing moved for this long. */
  drainQuietMs: number;
  /** The drain gives up after this long, moving or not. */
  drainMaxMs: number;
  /** How long the fleet is watched following every server before the first turn. */
  idleSeconds: number;
  /** The first replica writes a CPU profile. */
  profile: boolean;
}

export type Say = (message: string) => void;

export interface Drained {
  seconds: number;
  stats: SimStats;
  rest: Awaited<ReturnType<typeof atRest>>;
  /** finished; at rest with sessions unfinished (lost); stuck (something armed or busy that never moved); or still working. */
  ended: "finished" | "at rest" | "stuck" | "still working";
}

export interface Idle {
  seconds: number;
  db: [DatabaseCounters, DatabaseCounters];
  replicaCpuTicks: number[];
  replicaRssBytes: number[];
  simCpuTicks: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const until = (at: number) => sleep(Math.max(0, at - Date.now()));

/** What the window measured, raw: the figures are computed from it (report.ts). */
export interface Measured {
  t0: number;
  t1: number;
  segments: Array<[DatabaseCounters, DatabaseCounters]>;
  ends: Map<Replica, ReplicaSnapshot | undefined>;
  machine: { total: number; idle: number };
  simCpuTicks: number;
  simRssBytes: number;
  simFrom: SimStats;
  simTo: SimStats;
  kill?: Takeover & { successor: number };
  freeze?: Takeover & { frozenMs: number };
  restart?: Restart;
  faultErrors: string[];
}

export class SizeRun implements FleetUnderTest {
  readonly folder = mkdtempSync(join(tmpdir(), "tc-fleetbench-"));
  db!: BenchDatabase;
  sim!: SimProcess;
  readonly replicas: Replica[] = [];
  readonly timeline: Array<{ s: number; prompts: number; finished: number; busy: number; simRssMB: number }> = [];
  /** The fleet following every server with no session busy: what following alone costs. */
  idle: Idle | undefined;
  /** How long the start took: the simulated servers, every server followed, every session looked at once. */
  readonly startup: { simulatedServersMs?: number; followedMs?: number; firstLooksMs?: number } = {};
  private sampler: ReturnType<typeof setInterval> | undefined;
  private sampling = false;
  private beganAt = 0;

  constructor(
    readonly size: SizeSpec,
    readonly settings: RunSettings,
    private readonly say: Say,
  ) {}

  get leaseMs(): number {
    return this.settings.leaseMs;
  }

  get sessionsPerServer(): number {
    return Math.max(1, Math.round(this.size.sessions / this.size.servers));
  }

  /** How long the first turns are spread over: the warm-up and the window, so that the load is even across them. */
  get staggerMs(): number {
    return (this.settings.warmupSeconds + this.settings.seconds) * 1000;
  }

  async setUp(): Promise<void> {
    const { replicas, servers } = this.size;
    this.db = await BenchDatabase.start(replicas * 14 + 40);
    const started = Date.now();
    this.sim = await SimProcess.start({
      servers,
      sessionsPerServer: this.sessionsPerServer,
      todos: this.settings.todos,
      turnMs: this.settings.turnMs,
      latencyMs: this.settings.latencyMs,
      staggerMs: this.staggerMs,
      events: this.settings.events,
    });
    this.startup.simulatedServersMs = Date.now() - started;
    this.say(`${servers} simulated servers up in ${Date.now() - started} ms (pid ${this.sim.pid})`);
    const store = await openStore(this.db.url, { kind: "cli" });
    try {
      for (const s of this.sim.servers) await store.roster!.add({ name: s.name, url: s.url, directory: s.directory });
    } finally {
      await store.close();
    }
    for (let i = 0; i < replicas; i++) await this.startReplica();
    await this.sharedOut();
    this.startup.followedMs = Date.now() - started;
    this.say(`${replicas} replicas follow every server and stream its events (${Date.now() - started} ms)`);
    this.idle = await this.measureIdle();
  }

  /**
   * A stretch with every server followed and nothing to do: heartbeats, rounds, streams. It begins once the followers'
   * first look at every session (no todos yet) is over: every session has its audit row, and none came for three
   * seconds. Three quiet seconds alone came while the first looks still read OpenCode at 1,000 servers, and the
   * "idle" window then held 4,000 looks.
   */
  private async measureIdle(): Promise<Idle> {
    const deadline = Date.now() + 60_000 + this.size.sessions * 10;
    const { sessions } = this.size;
    for (let last = -1, still = 0; still < 3 && Date.now() < deadline; await sleep(1000)) {
      const [row] = await this.db.all<{ n: string; looked: string }>(
        "SELECT count(*) AS n, count(DISTINCT session_id) AS looked FROM audit_events",
      );
      still = Number(row!.n) === last && Number(row!.looked) >= sessions ? still + 1 : 0;
      last = Number(row!.n);
    }
    // From the first replica's start until every session had its first look (three quiet seconds included).
    this.startup.firstLooksMs = Date.now() - this.replicas[0]!.startedAt;
    const pids = this.replicas.map((r) => r.pid);
    const from = {
      at: Date.now(),
      db: await this.db.counters(),
      replicas: pids.map(cpuTicks),
      sim: cpuTicks(this.sim.pid),
    };
    await sleep(this.settings.idleSeconds * 1000);
    const to = {
      at: Date.now(),
      db: await this.db.counters(),
      replicas: pids.map(cpuTicks),
      sim: cpuTicks(this.sim.pid),
    };
    return {
      seconds: (to.at - from.at) / 1000,
      db: [from.db, to.db],
      replicaCpuTicks: to.replicas.map((t, i) => t - from.replicas[i]!),
      replicaRssBytes: pids.map(rssBytes),
      simCpuTicks: to.sim - from.sim,
    };
  }

  async startReplica(): Promise<Replica> {
    const settings: ReplicaSettings = {
      url: this.db.url,
      folder: this.folder,
      options: { countdownSeconds: this.settings.countdownSeconds, leaseMs: this.settings.leaseMs },
      profile: this.settings.profile,
    };
    const replica = await Replica.start(this.replicas.length, settings);
    this.replicas.push(replica);
    return replica;
  }

  /** Every server followed by a live replica, each replica with its share, and every event stream recorded. */
  private async sharedOut(): Promise<void> {
    const want = Math.min(this.size.replicas, this.size.servers);
    const deadline = Date.now() + 120_000 + this.size.servers * 200;
    let state = "";
    while (Date.now() < deadline) {
      const f = await followed(this.db);
      const shares = (await owners(this.db)).map(([, s]) => s.length);
      state = `${f.followed}/${f.total} followed, ${f.streaming} streaming, shares ${shares.join("/")}`;
      if (f.followed === f.total && f.streaming === f.total && shares.length === want) return;
      const dead = this.replicas.find((r) => !r.alive);
      if (dead) throw new Error(`replica ${dead.index} exited while starting: see ${dead.logFile}`);
      await sleep(250);
    }
    throw new Error(`the replicas did not share the servers out: ${state}`);
  }

  /** Starts the first turns and samples the simulated servers every few seconds. */
  begin(): void {
    this.sim.begin();
    this.beganAt = Date.now();
    this.sampler = setInterval(() => void this.sample(), 5000);
  }

  private async sample(): Promise<void> {
    if (this.sampling) return;
    this.sampling = true;
    try {
      await Promise.all(this.replicas.map((r) => r.snapshot()));
      const stats = await this.sim.stats();
      this.timeline.push({
        s: Math.round((Date.now() - this.beganAt) / 1000),
        prompts: stats.prompts,
        finished: stats.finished,
        busy: stats.busy,
        simRssMB: Math.round(stats.rssBytes / 2 ** 20),
      });
    } catch {
      // A sample missed (the simulated servers busy): the next one counts.
    } finally {
      this.sampling = false;
    }
  }

  /** The warm-up, then the window with its faults at fixed fractions of it. */
  async measure(): Promise<Measured> {
    const { seconds, warmupSeconds, dbDownMs } = this.settings;
    await sleep(warmupSeconds * 1000);
    for (const r of this.replicas) r.first = await r.snapshot();
    const t0 = Date.now();
    const c0 = await this.db.counters();
    const m0 = machineTicks();
    const sim0 = cpuTicks(this.sim.pid);
    const simFrom = await this.sim.stats();
    this.say(`window of ${seconds} s begins (${simFrom.prompts} prompts so far)`);
    // The profiled replica is not faulted: a killed one writes no profile.
    const spare = new Set<number>(this.settings.profile ? [this.replicas[0]!.pid] : []);
    const m: Partial<Measured> = { faultErrors: [] };
    const step = async (at: number, name: string, run: () => Promise<void>) => {
      await until(t0 + at * seconds * 1000);
      try {
        await run();
      } catch (error) {
        m.faultErrors!.push(`${name}: ${(error as Error).message}`);
      }
    };
    await step(0.15, "kill", async () => void (m.kill = await killOne(this, spare)));
    this.say(
      `killed replica ${m.kill?.pid}: ${m.kill?.servers} servers taken over in ${m.kill?.takeoverMs} ms${by(m.kill)}`,
    );
    await step(0.4, "freeze", async () => void (m.freeze = await freezeOne(this, spare)));
    this.say(
      `froze replica ${m.freeze?.pid}: ${m.freeze?.servers} servers taken over in ${m.freeze?.takeoverMs} ms${by(m.freeze)}`,
    );
    await step(0.7, "restart", async () => void (m.restart = await restartDatabase(this, dbDownMs, this.counters)));
    this.say(`PostgreSQL down ${m.restart?.downMs} ms and up again`);
    await until(t0 + seconds * 1000);
    clearInterval(this.sampler);
    const ends = new Map<Replica, ReplicaSnapshot | undefined>();
    await Promise.all(this.replicas.map(async (r) => ends.set(r, await r.snapshot(10_000))));
    const c1 = await this.db.counters();
    const segments: Array<[DatabaseCounters, DatabaseCounters]> = m.restart
      ? [
          [c0, m.restart.before],
          [m.restart.after, c1],
        ]
      : [[c0, c1]];
    const machine = machineTicks();
    return {
      ...(m as Measured),
      t0,
      t1: Date.now(),
      segments,
      ends,
      machine: { total: machine.total - m0.total, idle: machine.idle - m0.idle },
      simCpuTicks: cpuTicks(this.sim.pid) - sim0,
      simRssBytes: rssBytes(this.sim.pid),
      simFrom,
      simTo: await this.sim.stats(),
    };
  }

  private readonly counters = () => this.db.counters();

  /**
   * Waits until every session is finished and the fleet is at rest (nothing armed, pending or owed, no session busy),
   * until nothing moved for `drainQuietMs` (what is unfinished then is lost), or until `drainMaxMs` (the fleet still
   * working then is too slow for the load, which is said apart from lost work).
   */
  async drain(): Promise<Drained> {
    const started = Date.now();
    let moved = Date.now();
    let said = Date.now();
    let last = "";
    for (;;) {
      const stats = await this.sim.stats();
      const rest = await atRest(this.db);
      const atEnd = (ended: Drained["ended"]) => ({ seconds: (Date.now() - started) / 1000, stats, rest, ended });
      const quiet = rest.armed === 0 && rest.pending === 0 && rest.owed === 0 && stats.busy === 0;
      if (quiet && stats.unfinished === 0) return atEnd("finished");
      const now = `${stats.prompts}/${stats.finished}/${stats.busy}/${rest.armed}/${rest.pending}/${rest.owed}`;
      if (now !== last) moved = Date.now();
      last = now;
      if (Date.now() - moved > this.settings.drainQuietMs) return atEnd(quiet ? "at rest" : "stuck");
      if (Date.now() - started > this.settings.drainMaxMs) return atEnd("still working");
      if (Date.now() - said > 30_000) {
        said = Date.now();
        this.say(`draining: ${stats.unfinished} sessions unfinished, ${stats.busy} busy; ${JSON.stringify(rest)}`);
      }
      await sleep(2000);
    }
  }

  async tearDown(keep: boolean): Promise<void> {
    clearInterval(this.sampler);
    await Promise.all(this.replicas.map((r) => r.stop()));
    await this.sim?.stop();
    await this.db?.stop();
    if (keep) this.say(`replica logs kept in ${this.folder}`);
    else rmSync(this.folder, { recursive: true, force: true });
  }
}

/** Who took a faulted replica's servers, how many, and how long after its lease ran out (ms). */
function by(takeover: Takeover | undefined): string {
  if (!takeover?.takers.length) return "";
  const each = takeover.takers.map((t) => `${t.pid} ×${t.servers} +${t.firstAfterLapseMs}…+${t.lastAfterLapseMs}`);
  return `; after the lapse by ${each.join(", ")}`;
}
