// A fleet replica on a real PostgreSQL database, following servers that refuse connections (a loopback port nobody
// listens on): what is under test is when it takes a dead replica's servers over, not what it does with them, and
// what it tells a supervisor while none of them answers.
import { afterEach, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/resolve.js";
import { FleetReplica } from "../../src/service/fleet.js";
import { openStore } from "../../src/store/open.js";
import type { OperatorStore } from "../../src/store/operator.js";
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

describe("a fleet replica", () => {
  it("takes a dead replica's servers over when its lease runs out, not at its own next round", async () => {
    const url = await freshDatabase("replica");
    const store = await openStore(url, { kind: "fleet" });
    opened.push(store);
    const refused = `http://127.0.0.1:${await freePort()}`;
    for (const name of ["pod-0", "pod-1"]) await store.roster!.add({ name, url: refused, directory: "/workspace" });
    // The dead replica: it held both servers, and its lease, renewed 28 s ago, runs out 2 s from now.
    await store.heartbeat("r-dead", LEASE_MS);
    await pgQuery(url, "UPDATE replicas SET heartbeat_at = heartbeat_at - 28000 WHERE id = 'r-dead'");
    await pgQuery(url, "UPDATE servers SET owner = 'r-dead', owned_since = 0");
    const config = resolveConfig({ leaseMs: LEASE_MS, databasePath: url }, {});
    const replica = new FleetReplica({ store, config, log: () => undefined, settleMs: 0 });
    running.push(replica);
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
});
