// The servers a fleet shares, on a real PostgreSQL server: one follower per server, equal shares, a dead replica's
// servers taken by the others after its lease, a new replica given its share by the ones over theirs.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open/open.js";
import type { OperatorStore } from "../../src/store/operator/operator.js";
import { ServerExistsError, type ServerRoster } from "../../src/store/operator/roster.js";
import { freshDatabase, pgQuery } from "../support/pg-database.js";

const LEASE_MS = 15_000;
const opened: OperatorStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

async function fleet(servers: number) {
  const url = await freshDatabase("fleet");
  const store = await openStore(url, { kind: "fleet" });
  opened.push(store);
  const roster: ServerRoster = store.roster!;
  for (let i = 0; i < servers; i++)
    await roster.add({ name: `pod-${i}`, url: `http://10.0.0.${i}:4096`, directory: "/workspace" });
  /** A replica's round: its heartbeat, its share, and (its followers stopped) what it holds beyond it handed back. */
  const round = async (replica: string) => {
    await store.heartbeat(replica, LEASE_MS);
    const share = await roster.share(replica);
    await roster.handBack(replica, share.excess);
    return share;
  };
  const owners = async () =>
    Object.fromEntries((await roster.list()).map((s) => [s.name, s.owner])) as Record<string, string | null>;
  const counts = async () => {
    const byOwner = new Map<string, number>();
    for (const owner of Object.values(await owners())) if (owner) byOwner.set(owner, (byOwner.get(owner) ?? 0) + 1);
    return [...byOwner.entries()].sort();
  };
  return { url, store, roster, round, owners, counts };
}

describe("the servers a fleet shares (PostgreSQL)", () => {
  it("replicas sharing while others record their streams and hand servers back never deadlock", async () => {
    const { store, roster, round } = await fleet(120);
    const replicas = ["r-0", "r-1", "r-2", "r-3"];
    for (const replica of replicas) await round(replica);
    const failures: unknown[] = [];
    const until = Date.now() + 4000;
    // Each replica, in a loop, as its rounds and followers do: share, say which streams it has (its servers in an
    // order of its own, as a Map of followers gives them), and now and then hand one back.
    await Promise.all(
      replicas.map(async (replica, r) => {
        let turn = 0;
        while (Date.now() < until) {
          try {
            const share = await round(replica);
            const names = share.held.map((s) => s.name).sort(() => ((turn * 7 + r) % 3) - 1);
            await roster.seen(replica, names);
            if (++turn % 5 === 0 && names.length > 0) await roster.handBack(replica, [names[0]!]);
          } catch (error) {
            failures.push(error);
          }
        }
      }),
    );
    expect(failures.map((e) => (e as Error).message)).toEqual([]);
    expect(store).toBeDefined();
  });

  it("adds, lists and removes servers; a name is listed once", async () => {
    const { roster } = await fleet(0);
    const row = await roster.add({
      name: "pod-a",
      url: "http://10.0.0.7:4096",
      directory: "/workspace",
      passwordEnv: "POD_A_PASSWORD",
    });
    expect(row).toMatchObject({ name: "pod-a", owner: null, seenUntil: null, passwordEnv: "POD_A_PASSWORD" });
    await expect(roster.add({ name: "pod-a", url: "http://x:1", directory: "/w" })).rejects.toBeInstanceOf(
      ServerExistsError,
    );
    expect(await roster.list()).toMatchObject([{ name: "pod-a", followed: false, seenAgoMs: null }]);
    expect(await roster.remove("pod-a")).toBe(true);
    expect(await roster.remove("pod-a")).toBe(false);
    expect(await roster.list()).toEqual([]);
  });

  it("gives every live replica an equal share (the first by id take the remainder), stable round after round", async () => {
    const { store, round, counts } = await fleet(4);
    // Replicas that start together: each says it is alive before its first share (FleetReplica.start does).
    for (const replica of ["r-a", "r-b", "r-c"]) await store.heartbeat(replica, LEASE_MS);
    for (let i = 0; i < 3; i++) for (const replica of ["r-a", "r-b", "r-c"]) await round(replica);
    expect(await counts()).toEqual([
      ["r-a", 2],
      ["r-b", 1],
      ["r-c", 1],
    ]);
    const again = await round("r-a");
    expect(again.held.map((s) => s.name).sort()).toHaveLength(2);
    expect(again.excess).toEqual([]);
    expect(again.replicas).toBe(3);
  });

  it("a round with nothing to take or give locks no server row (a row lock is a write of the row)", async () => {
    const { url, store, round } = await fleet(40);
    for (const replica of ["r-a", "r-b"]) await store.heartbeat(replica, LEASE_MS);
    for (const replica of ["r-a", "r-b"]) await round(replica);
    // xmax: the last transaction that locked or deleted the row; a share that locked every row changes all 40.
    const lockedBy = async () =>
      (await pgQuery<{ xmax: string }>(url, "SELECT xmax::text AS xmax FROM servers ORDER BY name")).map((r) => r.xmax);
    const before = await lockedBy();
    for (let i = 0; i < 3; i++)
      for (const replica of ["r-a", "r-b"]) expect((await round(replica)).held).toHaveLength(20);
    expect(await lockedBy()).toEqual(before);
  });

  it("never gives one server to two replicas sharing at the same moment", async () => {
    const { store, roster, counts } = await fleet(7);
    const replicas = ["r-a", "r-b", "r-c"];
    for (const r of replicas) await store.heartbeat(r, LEASE_MS);
    for (let i = 0; i < 5; i++) {
      const shares = await Promise.all(replicas.map((r) => roster.share(r)));
      const held = shares.flatMap((s) => s.held.map((row) => row.name));
      expect(new Set(held).size).toBe(held.length);
    }
    expect(await counts()).toEqual([
      ["r-a", 3],
      ["r-b", 2],
      ["r-c", 2],
    ]);
  });

  it("replicas taking at the same moment do not wait for each other: a server another is taking is skipped", async () => {
    const { url, store, round, owners } = await fleet(6);
    for (const replica of ["r-a", "r-b", "r-c"]) await store.heartbeat(replica, LEASE_MS);
    for (const replica of ["r-a", "r-b"]) await round(replica);
    // Another replica in the middle of taking pod-4: its transaction holds the row.
    const taker = new pg.Client({ connectionString: url });
    await taker.connect();
    try {
      await taker.query("BEGIN");
      await taker.query("SELECT name FROM servers WHERE name = 'pod-4' FOR UPDATE");
      const share = await round("r-c");
      expect(share.held.map((s) => s.name)).toEqual(["pod-5"]);
      await taker.query("ROLLBACK");
    } finally {
      await taker.end();
    }
    // Let go of, it is taken at the next round.
    expect((await round("r-c")).held.map((s) => s.name)).toEqual(["pod-5", "pod-4"]);
    expect((await owners())["pod-4"]).toBe("r-c");
  });

  it("a replica whose heartbeat lapsed loses its servers to the others; a new one gets its share", async () => {
    const { url, store, roster, round, owners, counts } = await fleet(4);
    for (const replica of ["r-a", "r-b"]) await store.heartbeat(replica, LEASE_MS);
    for (const replica of ["r-a", "r-b"]) await round(replica);
    expect(await counts()).toEqual([
      ["r-a", 2],
      ["r-b", 2],
    ]);
    // r-b stops (killed): by the database's clock its heartbeat is older than its lease.
    await pgQuery(url, "UPDATE replicas SET heartbeat_at = heartbeat_at - $1 WHERE id = 'r-b'", [LEASE_MS + 1]);
    const taken = await round("r-a");
    expect(taken.held).toHaveLength(4);
    expect(Object.values(await owners())).toEqual(["r-a", "r-a", "r-a", "r-a"]);
    expect((await roster.list()).every((s) => s.followed)).toBe(true);
    // A new replica: r-a holds more than its share now and names the excess, hands it back, r-c takes it.
    const newcomer = await round("r-c");
    expect(newcomer.held).toEqual([]);
    const over = await round("r-a");
    expect(over.excess).toHaveLength(2);
    expect(Object.values(await owners()).filter((o) => o === null)).toHaveLength(2);
    const given = await round("r-c");
    expect(given.held.map((s) => s.name).sort()).toEqual([...over.excess].sort());
    expect(await counts()).toEqual([
      ["r-a", 2],
      ["r-c", 2],
    ]);
  });

  it("names as excess none it took over less than the settling time ago: an older one goes instead, or none yet", async () => {
    const { url, store, roster, round } = await fleet(4);
    for (const replica of ["r-a", "r-b"]) await store.heartbeat(replica, LEASE_MS);
    for (const replica of ["r-a", "r-b"]) await round(replica);
    const first = (await roster.list()).filter((s) => s.owner === "r-a").map((s) => s.name);
    // r-a has held its first two for a minute; r-b dies and r-a takes the other two over now.
    await pgQuery(url, "UPDATE servers SET owned_since = owned_since - 60000 WHERE owner = 'r-a'");
    await pgQuery(url, "UPDATE replicas SET heartbeat_at = heartbeat_at - $1 WHERE id = 'r-b'", [LEASE_MS + 1]);
    expect((await round("r-a")).held).toHaveLength(4);
    await store.heartbeat("r-c", LEASE_MS);
    await store.heartbeat("r-a", LEASE_MS);
    // A newcomer: r-a is two over its share. Without settling the two just taken over would go (the newest first).
    const settling = await roster.share("r-a", 10_000);
    expect([...settling.excess].sort()).toEqual([...first].sort());
    expect((await roster.share("r-a")).excess.filter((name) => first.includes(name))).toEqual([]);
    // Had it taken them all over just now, none would go yet.
    await pgQuery(url, "UPDATE servers SET owned_since = owned_since + 60000 WHERE name = ANY($1)", [first]);
    expect((await roster.share("r-a", 10_000)).excess).toEqual([]);
  });

  it("says when the first other live replica's lease runs out by the database's clock, and nothing when alone", async () => {
    const { url, store, round } = await fleet(2);
    await store.heartbeat("r-a", LEASE_MS);
    expect((await round("r-a")).nextLapseInMs).toBeNull();
    for (const replica of ["r-b", "r-c"]) await store.heartbeat(replica, LEASE_MS);
    // r-b last renewed its lease 12 s ago: it runs out in 3 s; r-c's in 15 s.
    await pgQuery(url, "UPDATE replicas SET heartbeat_at = heartbeat_at - 12000 WHERE id = 'r-b'");
    const share = await round("r-a");
    expect(share.nextLapseInMs).toBeGreaterThan(2_000);
    expect(share.nextLapseInMs).toBeLessThanOrEqual(3_000);
    // Its own lease is not another's: r-b, seen from itself, waits for r-a's or r-c's (about 15 s).
    expect((await round("r-b")).nextLapseInMs).toBeGreaterThan(12_000);
    // Once r-b's lease has run out it is no longer live, and r-c's is the next.
    await pgQuery(url, "UPDATE replicas SET heartbeat_at = heartbeat_at - 20000 WHERE id = 'r-b'");
    expect((await round("r-a")).nextLapseInMs).toBeGreaterThan(12_000);
  });

  it("records until when a follower had each stream, only for the servers it holds", async () => {
    const { roster, round } = await fleet(2);
    const share = await round("r-a");
    await roster.seen("r-a", ["pod-0", "pod-1"]);
    await roster.seen("r-b", ["pod-0"]);
    const listed = await roster.list();
    expect(share.held).toHaveLength(2);
    expect(listed.every((s) => s.seenUntil !== null && s.seenAgoMs !== null && s.seenAgoMs < 5000)).toBe(true);
  });
});
