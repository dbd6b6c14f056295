// A fleet replica on a real PostgreSQL database, following servers that refuse connections (a loopback port nobody
// listens on): what is under test is when it takes a dead replica's servers over, not what it does with them, and
// what it tells a supervisor while none of them answers.
import { afterEach, describe, expect, it, vi } from "vitest";
import { resolveConfig } from "../../src/config/resolve.js";
import { FleetReplica } from "../../src/service/fleet.js";
import { StandaloneService } from "../../src/service/standalone.js";
import { openStore } from "../../src/store/open/open.js";
import type { OperatorStore } from "../../src/store/operator/operator.js";
import type { Scope } from "../../src/store/port.js";
import type { Script, Statement } from "../../src/store/script.js";
import { freePort } from "../e2e/support/tcp-proxy.js";
import { freshDatabase, pgQuery } from "../support/pg-database.js";
import { waitFor } from "../support/wait-for.js";

/** Long enough that a round (a third of it, 10 s) cannot by chance come right when the dead replica's lease ends. */
const LEASE_MS = 30_000;

const running: FleetReplica[] = [];
const opened: OperatorStore[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

/** A replica on a fresh database, with a 3 s lease: its rounds a second apart. */
async function aReplica(database: string, settleMs = 0) {
  const url = await freshDatabase(database);
  const store = await openStore(url, { kind: "fleet" });
  opened.push(store);
  const config = resolveConfig({ leaseMs: 3000, databasePath: url }, {});
  const replica = new FleetReplica({ store, config, log: () => undefined, settleMs });
  running.push(replica);
  return { replica, url, store };
}

/**
 * A replica (not started) on a fresh database listing two servers that refuse connections, `held` of them by a dead
 * replica whose lease, renewed 28 s ago, runs out 2 s from now. `ownPool`: its rounds on a store of their own, as
 * `serve` opens it.
 */
async function aDeadReplicaHolding(database: string, held: string[], ownPool = false) {
  const url = await freshDatabase(database);
  const store = await openStore(url, { kind: "fleet" });
  opened.push(store);
  const liveness = ownPool ? await openStore(url, { kind: "fleet" }) : undefined;
  if (liveness) opened.push(liveness);
  const refused = `http://127.0.0.1:${await freePort()}`;
  for (const name of ["pod-0", "pod-1"]) await store.roster!.add({ name, url: refused, directory: "/workspace" });
  await store.heartbeat("r-dead", LEASE_MS);
  await pgQuery(url, "UPDATE replicas SET heartbeat_at = heartbeat_at - 28000 WHERE id = 'r-dead'");
  await pgQuery(url, "UPDATE servers SET owner = 'r-dead', owned_since = 0 WHERE name = ANY($1)", [held]);
  const config = resolveConfig({ leaseMs: LEASE_MS, databasePath: url }, {});
  const replica = new FleetReplica({ store, liveness, config, log: () => undefined, settleMs: 0 });
  running.push(replica);
  return { url, store, replica };
}

/** A replica (not started) with a 1.5 s lease on a fresh database: what it logs, and how many rounds it has made. */
async function aLoggedReplica(database: string) {
  const url = await freshDatabase(database);
  const store = await openStore(url, { kind: "fleet" });
  opened.push(store);
  const logged: string[] = [];
  const config = resolveConfig({ leaseMs: 1500, databasePath: url }, {});
  const replica = new FleetReplica({ store, config, log: (_, message) => logged.push(message), settleMs: 0 });
  running.push(replica);
  let rounds = 0;
  const heartbeat = store.heartbeat.bind(store);
  store.heartbeat = (owner, leaseMs) => (owner === replica.id && rounds++, heartbeat(owner, leaseMs));
  return { replica, store, logged, rounds: () => rounds };
}

/** The reads a lease tick makes of the rows of its scope, or of several scopes at once. */
const LEASE_READS = new Set([
  "armedIn",
  "pendingIn",
  "sessionsToRecheck",
  "armedInScopes",
  "pendingInScopes",
  "sessionsToRecheckInScopes",
]);

/**
 * Counts, round by round, the statements of the lease ticks' reads that the replica's followers make through `store`:
 * a read is counted in the round (the replica's heartbeats so far) during which it was asked for. Also which scopes
 * each server's rows were read for, and how often.
 */
function countLeaseReads(store: OperatorStore, replica: FleetReplica) {
  let round = 0;
  const perRound: number[] = [];
  const scopesRead = new Map<string, number>();
  const heartbeat = store.heartbeat.bind(store);
  store.heartbeat = (owner, leaseMs) => (owner === replica.id && round++, heartbeat(owner, leaseMs));
  const read = store.read.bind(store);
  function* counted<T>(script: Script<T>, askedIn: number): Script<T> {
    let step = script.next();
    while (!step.done) {
      const statement: Statement = step.value;
      if (LEASE_READS.has(statement.name)) {
        perRound[askedIn] = (perRound[askedIn] ?? 0) + 1;
        const [scopes] = statement.args as [Scope | Scope[]];
        for (const { server } of [scopes].flat()) scopesRead.set(server!, (scopesRead.get(server!) ?? 0) + 1);
      }
      step = script.next(yield statement);
    }
    return step.value;
  }
  store.read = <T>(script: Script<T>) => read(counted(script, round));
  return {
    round: () => round,
    perRound: (from: number, to: number) => Array.from({ length: to - from }, (_, i) => perRound[from + i] ?? 0),
    scopesRead,
  };
}

describe("a fleet replica", () => {
  it("takes a dead replica's servers over when its lease runs out, not at its own next round", async () => {
    const { url, replica } = await aDeadReplicaHolding("replica", ["pod-0", "pod-1"]);
    await replica.start();
    // Its first round found both servers held by a live replica.
    expect(replica.stats().following).toEqual([]);
    const [row] = await waitFor("the servers taken over", async () => {
      const rows = await pgQuery<{ taken_after_lapse: string }>(
        url,
        `SELECT min(s.owned_since) - (r.heartbeat_at + r.lease_ms) AS taken_after_lapse
           FROM servers s, replicas r WHERE r.id = 'r-dead' AND s.owner = $1 GROUP BY r.heartbeat_at, r.lease_ms
         HAVING count(*) = 2`,
        [replica.id],
      );
      return rows.length > 0 ? rows : undefined;
    });
    // Taken right after the lapse by the database's clock; its next round was due 8 s later.
    expect(Number(row!.taken_after_lapse)).toBeGreaterThan(0);
    expect(Number(row!.taken_after_lapse)).toBeLessThan(LEASE_MS / 3 / 2);
    expect(replica.stats().following).toEqual(["pod-0", "pod-1"]);
  });

  it("takes a dead replica's servers right after a round still running at the lapse, not a round later", async () => {
    const { url, store, replica } = await aDeadReplicaHolding("replica_lapse_in_round", ["pod-0", "pod-1"]);
    // Its first round is held up in `seen` (a busy pool) until the dead replica's lease has run out.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const seen = store.roster!.seen.bind(store.roster);
    let rounds = 0;
    store.roster!.seen = async (id, names) => (++rounds === 1 && (await held), seen(id, names));
    const started = replica.start();
    await waitFor("the first round held up", () => rounds === 1);
    await waitFor("the dead replica's lease run out", async () => {
      const [row] = await pgQuery<{ lapsed: boolean }>(
        url,
        "SELECT heartbeat_at + lease_ms < (extract(epoch from clock_timestamp()) * 1000)::bigint AS lapsed " +
          "FROM replicas WHERE id = 'r-dead'",
      );
      return row!.lapsed;
    });
    const [at] = await pgQuery<{ released: string }>(
      url,
      "SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS released",
    );
    release();
    await started;
    const [row] = await waitFor("the servers taken over", async () => {
      const rows = await pgQuery<{ last: string }>(
        url,
        "SELECT max(owned_since) AS last FROM servers WHERE owner = $1 HAVING count(*) = 2",
        [replica.id],
      );
      return rows.length > 0 ? rows : undefined;
    });
    // Taken as the held round ended; the next regular round was due 10 s after the first.
    expect(Number(row!.last) - Number(at!.released)).toBeLessThan(LEASE_MS / 3 / 2);
  });

  it.each([
    ["on one store", false],
    ["with its rounds on a pool of their own, as serve runs it", true],
  ])(
    "adopts a dead replica's countdowns in the servers it follows when its lease runs out (%s)",
    async (_, ownPool) => {
      // The dead replica holds pod-1, and a countdown in pod-0's scope, which this replica will follow. Its engines'
      // store saw it alive once (its heartbeat, in the setup): only a heartbeat through that store tells them otherwise.
      const { url, replica } = await aDeadReplicaHolding(`replica_adopt_at_lapse_${+ownPool}`, ["pod-1"], ownPool);
      await pgQuery(
        url,
        `INSERT INTO countdowns (id, session_id, directory, server, armed_at, deadline_at, state, owner, lease_until)
       VALUES ('cd_left', 'ses_left', '/workspace', 'pod-0', $1, $1::bigint + 60000, 'armed', 'r-dead', $1)`,
        [Date.now()],
      );
      await replica.start();
      expect(replica.stats().following).toEqual(["pod-0"]);
      const [row] = await waitFor("the countdown adopted", async () => {
        const rows = await pgQuery<{ adopted_after_lapse: string; owner: string }>(
          url,
          `SELECT coalesce(a.db_at, a.at) - (r.heartbeat_at + r.lease_ms) AS adopted_after_lapse, c.owner
           FROM audit_events a, replicas r, countdowns c
          WHERE a.session_id = 'ses_left' AND a.event = 'resumed' AND a.reason = 'lease_expired' AND r.id = 'r-dead'
            AND c.id = 'cd_left'`,
        );
        return rows.length > 0 ? rows : undefined;
      });
      expect(row!.owner).toBe(replica.id);
      // Adopted by the round at the lapse (by the database's clock); the follower's next lease tick was 8 s later.
      expect(Number(row!.adopted_after_lapse)).toBeGreaterThan(0);
      expect(Number(row!.adopted_after_lapse)).toBeLessThan(LEASE_MS / 3 / 2);
    },
  );

  it("keeps its owner alive and its countdowns' leases renewed once a round, however many servers it follows", async () => {
    const { replica, url, store } = await aReplica("replica_owner");
    const refused = `http://127.0.0.1:${await freePort()}`;
    const servers = ["pod-0", "pod-1", "pod-2", "pod-3"];
    for (const name of servers) await store.roster!.add({ name, url: refused, directory: "/workspace" });
    let heartbeats = 0;
    const heartbeat = store.heartbeat.bind(store);
    store.heartbeat = (owner, leaseMs) => (owner === replica.id && heartbeats++, heartbeat(owner, leaseMs));
    await replica.start();
    await waitFor("the replica to follow every server", () => replica.stats().following.length === servers.length);
    // One of its countdowns, in a followed server's scope, its lease about to run out: the round renews it.
    await pgQuery(
      url,
      `INSERT INTO countdowns (id, session_id, directory, server, armed_at, deadline_at, state, owner, lease_until)
       VALUES ('cd_held', 'ses_held', '/workspace', 'pod-0', 0, 9e12, 'armed', $1, 1)`,
      [replica.id],
    );
    heartbeats = 0;
    const startedAt = Date.now();
    await waitFor("the lease renewed by a round", async () => {
      const [row] = await pgQuery<{ lease_until: string }>(
        url,
        "SELECT lease_until FROM countdowns WHERE id = 'cd_held'",
      );
      return Number(row!.lease_until) > startedAt;
    });
    // Rounds come a second apart (lease 3 s): over four more, one heartbeat each, not one per server as well.
    await waitFor("four more rounds", () => heartbeats >= 5);
    const elapsedRounds = (Date.now() - startedAt) / 1000;
    expect(heartbeats).toBeLessThanOrEqual(Math.ceil(elapsedRounds) + 1);
    expect(heartbeats).toBeLessThan(servers.length * Math.floor(elapsedRounds));
  });

  it("keeps saying it is alive while a round is held up (a lock, a busy pool), and does not double the round", async () => {
    const { replica, store } = await aReplica("replica_held_round");
    let heartbeats = 0;
    const heartbeat = store.heartbeat.bind(store);
    store.heartbeat = (owner, leaseMs) => (owner === replica.id && heartbeats++, heartbeat(owner, leaseMs));
    await replica.start();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const share = store.roster!.share.bind(store.roster);
    let shares = 0;
    store.roster!.share = async (id, settleMs) => (shares++, await held, share(id, settleMs));
    try {
      // Rounds are a second apart (lease 3 s): three heartbeats while the first held round has not ended.
      await waitFor("the first round held up", () => shares === 1);
      const before = heartbeats;
      await waitFor("three more heartbeats", () => heartbeats >= before + 3);
      expect(shares).toBe(1);
    } finally {
      release();
    }
    await waitFor("the rounds going on", () => shares >= 2);
  });

  it("gives up a server held beyond its share even when handing it back failed (the database down right then)", async () => {
    const { replica, url, store } = await aReplica("replica_hand_back_again");
    const refused = `http://127.0.0.1:${await freePort()}`;
    for (const name of ["pod-0", "pod-1"]) await store.roster!.add({ name, url: refused, directory: "/workspace" });
    await replica.start();
    expect(replica.stats().following).toEqual(["pod-0", "pod-1"]);
    const handBack = store.roster!.handBack.bind(store.roster);
    const handBacks: string[][] = [];
    store.roster!.handBack = async (id, names) => {
      handBacks.push(names);
      if (handBacks.length === 1) throw new Error("Connection terminated unexpectedly");
      return handBack(id, names);
    };
    // A newcomer whose lease outlives the test: one server each, once the two taken at the start have settled.
    await store.heartbeat("r-newcomer", 600_000);
    await waitFor("the first hand-back failed", () => handBacks.length >= 1);
    expect(replica.stats().following).toHaveLength(1);
    const [given] = await waitFor("the server handed back at a later round", async () => {
      const rows = await pgQuery<{ name: string }>(url, "SELECT name FROM servers WHERE owner IS NULL");
      return rows.length > 0 ? rows : undefined;
    });
    expect(handBacks.map(([name]) => name)).toEqual([given!.name, given!.name]);
  });

  it("goes on with its rounds while the countdowns of servers let go wait to be handed back", async () => {
    const { replica, store } = await aReplica("replica_hand_back_countdowns");
    const refused = `http://127.0.0.1:${await freePort()}`;
    for (const name of ["pod-0", "pod-1"]) await store.roster!.add({ name, url: refused, directory: "/workspace" });
    await replica.start();
    // The follower let go hands its countdowns back as it stops; the replica does again for any it could not, and
    // that one waits (a busy pool).
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const change = store.change.bind(store);
    let handBacks = 0;
    store.change = async (c) => {
      if (c.name === "release-leases" && ++handBacks > 1) await held;
      return change(c);
    };
    let shares = 0;
    const share = store.roster!.share.bind(store.roster);
    store.roster!.share = (id, settleMs) => (shares++, share(id, settleMs));
    await store.heartbeat("r-newcomer", 600_000);
    try {
      await waitFor("the replica's hand-back waiting", () => handBacks >= 2);
      const before = shares;
      await waitFor("three more rounds while it waits", () => shares >= before + 3);
      expect(handBacks).toBe(2);
    } finally {
      release();
    }
  });

  it("is ready while it follows no server, and not ready, saying why, while none of those it follows answers", async () => {
    const url = await freshDatabase("replica_ready");
    const store = await openStore(url, { kind: "fleet" });
    opened.push(store);
    const config = resolveConfig({ leaseMs: 3000, hostTimeoutMs: 1000, databasePath: url }, {});
    const replica = new FleetReplica({ store, config, log: () => undefined, settleMs: 0 });
    running.push(replica);
    await replica.start();
    expect(replica.readiness()).toEqual({ ready: true });
    const refused = `http://127.0.0.1:${await freePort()}`;
    await store.roster!.add({ name: "pod-0", url: refused, directory: "/workspace" });
    const reason = await waitFor("the replica to follow the server and find it refusing", async () => {
      const { ready, reason } = replica.readiness();
      return !ready && reason?.includes("event stream unavailable") ? reason : undefined;
    });
    expect(reason).toContain(`none of the 1 OpenCode server(s) it follows answers (${refused}`);
  });

  it("follows the other servers while one cannot be followed (a URL no client accepts), saying so once", async () => {
    const { replica, store, logged, rounds } = await aLoggedReplica("replica_unfollowable");
    const refused = `http://127.0.0.1:${await freePort()}`;
    await store.roster!.add({ name: "pod-0", url: refused, directory: "/workspace" });
    await store.roster!.add({ name: "pod-1", url: refused, directory: "/workspace" });
    // Written by hand or by another tool: the CLI refuses such a URL, the table does not.
    await store.reader.all("UPDATE servers SET url = 'pod zero' WHERE name = 'pod-0'");
    await replica.start();
    expect(replica.stats().following).toEqual(["pod-1"]);
    // Two more rounds (a heartbeat each): pod-0 tried again each time, and said once.
    const from = rounds();
    await waitFor("two more rounds", () => rounds() >= from + 2);
    expect(replica.stats().following).toEqual(["pod-1"]);
    expect(logged.filter((m) => m.startsWith("[pod-0] cannot follow pod zero"))).toHaveLength(1);
  });

  it("follows a server again at the next round when its follower could not start", async () => {
    const { replica, store, logged } = await aLoggedReplica("replica_start_failed");
    const start = vi
      .spyOn(StandaloneService.prototype, "start")
      .mockRejectedValueOnce(new Error("the first start fails"));
    try {
      await store.roster!.add({ name: "pod-0", url: `http://127.0.0.1:${await freePort()}`, directory: "/workspace" });
      await replica.start();
      await waitFor("a second follower started", () => start.mock.calls.length >= 2);
      expect(logged).toContain(
        "[pod-0] could not start following: the first start fails (tried again every round; said again only if the cause changes)",
      );
      expect(replica.stats().following).toEqual(["pod-0"]);
    } finally {
      start.mockRestore();
    }
  });

  it("starts once however often start() is called", async () => {
    const { replica } = await aReplica("replica_start_once");
    const first = replica.start();
    const second = replica.start();
    await Promise.all([first, second]);
    expect(second).toBe(first);
    expect(replica.mode).toBe("running");
  });

  it("cannot start again once stopped: it stays retired", async () => {
    const { replica, url } = await aReplica("replica_start_again");
    await replica.start();
    await replica.stop();
    const again = await replica.start().then(
      () => "started again",
      (error: Error) => error.message,
    );
    // Refused before it said it is alive again.
    expect(await pgQuery(url, "SELECT id FROM replicas WHERE id = $1", [replica.id])).toEqual([]);
    expect(again).toBe(`the fleet replica ${replica.id} was stopped: it cannot start again`);
    expect(replica.mode).toBe("stopped");
  });

  it("stopped during its start: stops once the start is over, with no round, and retires; every stop() the same", async () => {
    // Its start waits a second for replicas starting with it, after it said it is alive.
    const { replica, url, store } = await aReplica("replica_stop_starting", 1000);
    const refused = `http://127.0.0.1:${await freePort()}`;
    await store.roster!.add({ name: "pod-0", url: refused, directory: "/workspace" });
    const settled: string[] = [];
    const started = replica.start().then(() => settled.push("started"));
    await waitFor("the replica to say it is alive", async () => {
      const rows = await pgQuery(url, "SELECT id FROM replicas WHERE id = $1", [replica.id]);
      return rows.length > 0 ? rows : undefined;
    });
    const stopped = replica.stop();
    expect(replica.stop()).toBe(stopped);
    expect(replica.readiness()).toEqual({ ready: false, reason: "stopping" });
    await Promise.all([started, stopped.then(() => settled.push("stopped"))]);
    expect(settled).toEqual(["started", "stopped"]);
    expect(await pgQuery(url, "SELECT id FROM replicas WHERE id = $1", [replica.id])).toEqual([]);
    // Stopped before its first round: it never took the server it would have shared.
    expect(await pgQuery(url, "SELECT owner FROM servers WHERE name = 'pod-0'")).toEqual([{ owner: null }]);
    expect(replica.stats().following).toEqual([]);
    expect(replica.mode).toBe("stopped");
  });

  it("reads its followers' lease rows in three statements a round, whether it follows 2 servers or 8", async () => {
    const perRound: Record<number, number[]> = {};
    for (const count of [2, 8]) {
      const { replica, store } = await aReplica(`replica_reads_${count}`);
      const refused = `http://127.0.0.1:${await freePort()}`;
      const servers = Array.from({ length: count }, (_, i) => `pod-${i}`);
      for (const name of servers) await store.roster!.add({ name, url: refused, directory: "/workspace" });
      const reads = countLeaseReads(store, replica);
      await replica.start();
      // Each follower reads its own rows once as its engine starts (its recovery); then every scope is read by the
      // rounds: once that happened for all, every follower has started.
      await waitFor("every server's rows read by a round", () =>
        servers.every((name) => (reads.scopesRead.get(name) ?? 0) >= 6),
      );
      const from = reads.round() + 1;
      await waitFor("four more rounds", () => reads.round() >= from + 5);
      perRound[count] = reads.perRound(from, from + 4);
      await replica.stop();
    }
    // Armed countdowns, pending continuations, looks owed: one statement each for all the servers followed.
    expect(perRound).toEqual({ 2: [3, 3, 3, 3], 8: [3, 3, 3, 3] });
  });
});
