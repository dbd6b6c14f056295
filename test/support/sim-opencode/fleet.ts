// A fleet of simulated OpenCode servers in one process: M servers on their own ports, S sessions each, one scheduler
// and one heartbeat timer for all of them. Every session starts with a first turn (the starts spread over
// `startStaggerMs`) that leaves `todosPerSession` todos open; each continuation completes one. `stats()` says what the
// prompts did: a session needs exactly `todosPerSession` of them, one more is doubled work, one less is lost work.
import type { TurnError } from "./payloads.js";
import { Scheduler } from "./scheduler.js";
import { SimServer } from "./server.js";
import type { SdkCall } from "./requests.js";
import type { EventDetail } from "./turn-events.js";

export interface SimFleetOptions {
  servers: number;
  sessionsPerServer: number;
  /** Todos each session's first turn writes, all open (default 3): the continuations it needs. */
  todosPerSession?: number;
  /** How long a turn takes (default 1500 ms). */
  turnMs?: number;
  /**
   * How long each answer waits before it is written (default 0): one delay for every call, or one per SDK call
   * (`{ "session.messages": 40, "session.promptAsync": 20 }`). Event streams deliver without delay.
   */
  latencyMs?: number | Partial<Record<SdkCall, number>>;
  /** Server i's project directory (default `/sim/project-<i>`). */
  directoryOf?: (i: number) => string;
  /**
   * The first turns start spread over this span, each lasting `turnMs` (default 0: all busy at once). A session
   * whose first turn has not started is idle, without messages or todos, as a session nobody prompted yet.
   */
  startStaggerMs?: number;
  /** `true`: the first turns start at `begin()`, not at once (so that followers can connect first). */
  paused?: boolean;
  /** `full` (default): every event OpenCode publishes for a turn; `lean`: only those the enforcer reacts to. */
  events?: EventDetail;
  /** OpenCode's `server.heartbeat` period (default 10 s). */
  heartbeatMs?: number;
  /** The provider's error a session's turn (1: its first) fails on (a limit, say); undefined: it works. */
  failTurn?: (sessionId: string, turn: number) => TurnError | undefined;
  /** Every server asks for this password, as OpenCode run with `OPENCODE_SERVER_PASSWORD` does (default: none). */
  password?: string;
  /**
   * How long an idle kept-alive connection stays open (default 65 s, so that a fleet's followers keep theirs). The
   * e2e worlds close them within seconds, as a real OpenCode's clients do: a connection silenced on the wire is then
   * not reused for a request.
   */
  keepAliveMs?: number;
}

export interface SimServerInfo {
  name: string;
  url: string;
  directory: string;
}

/** How many unfinished sessions `stats()` names. */
const UNFINISHED_IDS = 20;

export interface SimStats {
  servers: number;
  sessions: number;
  /** Milliseconds since the first turns began (0 before). */
  elapsedMs: number;
  /** Prompts accepted (`prompt_async` answered 204). */
  prompts: number;
  promptsPerSecond: number;
  /** Prompts on a busy session (answered by another turn: work done twice). */
  doubled: number;
  /** Prompts on an idle session whose todos were all completed (a continuation too many). */
  afterDone: number;
  /** Sessions idle with every todo completed. */
  finished: number;
  /** Sessions with a todo still open (lost work, once the run is over), or still busy. */
  unfinished: number;
  /** The first few of those, by id: where a run that lost work looks first. */
  unfinishedIds: string[];
  busy: number;
  turns: number;
  /** How many sessions received how many prompts: `{ "3": 49999, "4": 1 }`. */
  promptsPerSession: Record<string, number>;
  requests: number;
  events: number;
  subscribers: number;
  /** Event bytes written but not yet taken by the followers' sockets (a follower reading slower than events come). */
  streamBacklogBytes: number;
  rssBytes: number;
  heapUsedBytes: number;
  /** This process's CPU time so far (the fleet is meant to have a process of its own). */
  cpuUserMs: number;
  cpuSystemMs: number;
}

export class SimFleet {
  readonly servers: SimServerInfo[];
  private readonly heartbeat: NodeJS.Timeout;
  private begunAt = 0;

  constructor(
    readonly sims: SimServer[],
    private readonly scheduler: Scheduler,
    private readonly options: SimFleetOptions,
  ) {
    this.servers = sims.map((s) => ({ name: s.name, url: s.url, directory: s.directory }));
    this.heartbeat = setInterval(() => {
      for (const s of sims) s.heartbeat();
    }, options.heartbeatMs ?? 10_000);
  }

  /** Starts every session's first turn (once; `startSimFleet` does it unless `paused`). */
  begin(now = Date.now()): void {
    if (this.begunAt) return;
    this.begunAt = now;
    const stagger = this.options.startStaggerMs ?? 0;
    const perServer = this.options.sessionsPerServer;
    const total = this.sims.length * perServer;
    // Session n of server i is the (n × servers + i)-th to start: every server gets its share of each moment.
    this.sims.forEach((server, i) => {
      let n = 0;
      for (const session of server.sessions.values()) {
        const rank = n++ * this.sims.length + i;
        session.beginFirstTurn(now + (total > 1 ? Math.round((stagger * rank) / (total - 1)) : 0), now);
      }
    });
  }

  /** Server i stops answering and publishing for `ms`. */
  freeze(i: number, ms: number): void {
    const server = this.sims[i];
    if (!server) throw new Error(`no server ${i} (the fleet has ${this.sims.length})`);
    server.freeze(ms);
  }

  stats(now = Date.now()): SimStats {
    const cpu = process.cpuUsage();
    const stats: SimStats = {
      servers: this.sims.length,
      sessions: 0,
      elapsedMs: this.begunAt ? now - this.begunAt : 0,
      prompts: 0,
      promptsPerSecond: 0,
      doubled: 0,
      afterDone: 0,
      finished: 0,
      unfinished: 0,
      unfinishedIds: [],
      busy: 0,
      turns: 0,
      promptsPerSession: {},
      requests: 0,
      events: 0,
      subscribers: 0,
      streamBacklogBytes: 0,
      rssBytes: process.memoryUsage.rss(),
      heapUsedBytes: process.memoryUsage().heapUsed,
      cpuUserMs: Math.round(cpu.user / 1000),
      cpuSystemMs: Math.round(cpu.system / 1000),
    };
    for (const server of this.sims) {
      stats.requests += server.requests;
      stats.events += server.events;
      stats.subscribers += server.subscribers;
      stats.streamBacklogBytes += server.backlogBytes;
      for (const [id, s] of server.sessions) {
        stats.sessions++;
        stats.prompts += s.prompts;
        stats.doubled += s.doubled;
        stats.afterDone += s.afterDone;
        stats.turns += s.turnsDone;
        if (s.busy) stats.busy++;
        if (s.finished) stats.finished++;
        else if (++stats.unfinished <= UNFINISHED_IDS) stats.unfinishedIds.push(id);
        stats.promptsPerSession[s.prompts] = (stats.promptsPerSession[s.prompts] ?? 0) + 1;
      }
    }
    stats.promptsPerSecond = stats.elapsedMs > 0 ? Math.round((stats.prompts / stats.elapsedMs) * 1e5) / 100 : 0;
    return stats;
  }

  async stop(): Promise<void> {
    clearInterval(this.heartbeat);
    this.scheduler.stop();
    await Promise.all(this.sims.map((s) => s.close()));
  }
}

/** Starts the servers (listening, sessions made) and, unless `paused`, their first turns. */
export async function startSimFleet(options: SimFleetOptions): Promise<SimFleet> {
  const scheduler = new Scheduler();
  const sims: SimServer[] = [];
  const now = Date.now();
  try {
    for (let i = 0; i < options.servers; i++) {
      const server = new SimServer(scheduler, {
        name: `sim-${i}`,
        directory: options.directoryOf?.(i) ?? `/sim/project-${i}`,
        todos: options.todosPerSession ?? 3,
        turnMs: options.turnMs ?? 1500,
        latencyMs: options.latencyMs ?? 0,
        detail: options.events ?? "full",
        password: options.password,
        keepAliveMs: options.keepAliveMs ?? 65_000,
        failTurn: options.failTurn,
      });
      sims.push(server);
      await server.listen();
      for (let n = 0; n < options.sessionsPerServer; n++) server.addSession(`sim ${i}/${n}`, now);
    }
  } catch (error) {
    scheduler.stop();
    await Promise.all(sims.map((s) => s.close().catch(() => undefined)));
    throw error;
  }
  const fleet = new SimFleet(sims, scheduler, options);
  if (!options.paused) fleet.begin();
  return fleet;
}
