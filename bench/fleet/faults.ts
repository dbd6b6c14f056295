// The three faults of the measured window: the busiest replica SIGKILLed (and a new one started, as an orchestrator
// would), another frozen past its lease (SIGSTOP, then SIGCONT), and PostgreSQL stopped and started again. Each is
// timed from the rows: when the other replicas took the servers over, by the database's clock and by the wall's.
import type { BenchDatabase, DatabaseCounters } from "./database.js";
import type { Replica } from "./replicas.js";
import { held, lastHeartbeat, leases, owners, pidOf, type Lease } from "./rows.js";

export interface FleetUnderTest {
  db: BenchDatabase;
  replicas: Replica[];
  leaseMs: number;
  /** Starts one more replica (the killed one's successor). */
  startReplica(): Promise<Replica>;
}

/** A replica that lost its servers: how many, what it held, and how soon the others had them. */
export interface Takeover {
  owner: string;
  pid: number;
  at: number;
  servers: number;
  armedAtFault: number;
  pendingAtFault: number;
  /** From its last heartbeat to the last of its servers owned by another live replica (the database's clock). */
  takeoverMs: number | null;
  /** From the fault to the same, by the benchmark's clock (polled every 100 ms). */
  takeoverWallMs: number | null;
  /**
   * Each replica that took some, by pid: how many, and when its first and last were taken after the lease ran out
   * (the database's clock): one replica late says a starved taker, all of them late a slow round.
   */
  takers: Array<{ pid: number; servers: number; firstAfterLapseMs: number; lastAfterLapseMs: number }>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The busiest owner among the replicas that may be faulted, with its servers: one that holds armed countdowns, so that
 * their takeover is timed too (waited for up to ten seconds; past that, the busiest one whatever it holds).
 */
async function busiest(fleet: FleetUnderTest, spare: Set<number>): Promise<[string, string[], Replica]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const candidates: Array<[string, string[], Replica]> = [];
    for (const [owner, servers] of await owners(fleet.db)) {
      const replica = fleet.replicas.find((r) => r.pid === pidOf(owner));
      if (replica && replica.alive && !spare.has(replica.pid)) candidates.push([owner, servers, replica]);
    }
    if (candidates.length === 0) throw new Error("no replica follows a server: nothing to fault");
    for (const candidate of candidates) if ((await held(fleet.db, candidate[0])).armed > 0) return candidate;
    if (Date.now() > deadline) return candidates[0]!;
    await sleep(200);
  }
}

/** Polls until every one of `servers` is owned by a live replica other than `owner`. */
async function takenOver(fleet: FleetUnderTest, owner: string, servers: string[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  const names = new Set(servers);
  while (Date.now() < deadline) {
    try {
      const mine = (await leases(fleet.db)).filter((s) => names.has(s.name));
      if (mine.every((s) => s.alive && s.owner !== owner)) return mine;
    } catch {
      // The database restarting: asked again.
    }
    await sleep(100);
  }
  return undefined;
}

function byTaker(rows: Lease[], lapse: number): Takeover["takers"] {
  const taken = new Map<string, number[]>();
  for (const row of rows)
    if (row.owner) taken.set(row.owner, [...(taken.get(row.owner) ?? []), row.ownedSince ?? lapse]);
  return [...taken]
    .map(([owner, at]) => ({
      pid: pidOf(owner),
      servers: at.length,
      firstAfterLapseMs: Math.min(...at) - lapse,
      lastAfterLapseMs: Math.max(...at) - lapse,
    }))
    .sort((a, b) => b.lastAfterLapseMs - a.lastAfterLapseMs);
}

async function fault(
  fleet: FleetUnderTest,
  spare: Set<number>,
  signal: "SIGKILL" | "SIGSTOP",
): Promise<{ takeover: Takeover; replica: Replica }> {
  const [owner, servers, replica] = await busiest(fleet, spare);
  const before = await held(fleet.db, owner);
  replica.kill(signal);
  const at = Date.now();
  if (signal === "SIGKILL") await replica.exited;
  const heartbeat = await lastHeartbeat(fleet.db, owner);
  const rows = await takenOver(fleet, owner, servers, 3 * fleet.leaseMs + 60_000);
  const takeover: Takeover = {
    owner,
    pid: replica.pid,
    at,
    servers: servers.length,
    armedAtFault: before.armed,
    pendingAtFault: before.pending,
    takeoverMs: rows ? Math.max(...rows.map((s) => (s.ownedSince ?? heartbeat) - heartbeat)) : null,
    takeoverWallMs: rows ? Date.now() - at : null,
    takers: rows ? byTaker(rows, heartbeat + fleet.leaseMs) : [],
  };
  return { takeover, replica };
}

/** The busiest replica SIGKILLed; once its servers are taken over, a successor starts. */
export async function killOne(fleet: FleetUnderTest, spare: Set<number>): Promise<Takeover & { successor: number }> {
  const { takeover } = await fault(fleet, spare, "SIGKILL");
  const successor = await fleet.startReplica();
  spare.add(successor.pid);
  return { ...takeover, successor: successor.pid };
}

/** The busiest other replica frozen until its servers are taken over and one lease more, then woken. */
export async function freezeOne(fleet: FleetUnderTest, spare: Set<number>): Promise<Takeover & { frozenMs: number }> {
  const { takeover, replica } = await fault(fleet, spare, "SIGSTOP");
  spare.add(replica.pid);
  await sleep(fleet.leaseMs);
  replica.kill("SIGCONT");
  return { ...takeover, frozenMs: Date.now() - takeover.at };
}

export interface Restart {
  stoppedAt: number;
  startedAt: number;
  downMs: number;
  /** The counters just before the stop and just after the start: the window's statistics are summed around it. */
  before: DatabaseCounters;
  after: DatabaseCounters;
}

/** PostgreSQL stopped (fast) for `downMs` and started again. */
export async function restartDatabase(
  fleet: FleetUnderTest,
  downMs: number,
  counters: () => Promise<DatabaseCounters>,
): Promise<Restart> {
  const before = await counters();
  const { stoppedAt, startedAt } = await fleet.db.restart(downMs);
  let after: DatabaseCounters | undefined;
  while (!after)
    try {
      after = await counters();
    } catch {
      await sleep(100);
    }
  return { stoppedAt, startedAt, downMs: startedAt - stoppedAt, before, after };
}
