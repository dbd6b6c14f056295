// FollowerTicks promises: the lease rows of every follower whose engine takes a tick are read in three statements,
// however many followers there are, and each engine acts on its own scope's rows only; a follower not started, or let
// go while the rows were read, gets none. On a SQLite file (the statements are the store's contract on PostgreSQL too,
// test/store/statements.cases.ts), with followers of servers that refuse connections: what is under test is where the
// rows go, not what the engines decide. A fleet replica driving these ticks every round is
// test/service/fleet-replica.postgres.test.ts.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/resolve.js";
import { FollowerTicks } from "../../src/service/follower-ticks.js";
import { StandaloneService } from "../../src/service/standalone.js";
import { arm } from "../../src/store/changes/arm.js";
import { openStore } from "../../src/store/open/open.js";
import type { OperatorStore } from "../../src/store/operator/operator.js";
import { newOwnerId } from "../../src/store/owner.js";
import { countdown } from "../../src/store/reads.js";
import type { Script } from "../../src/store/script.js";
import { freePort } from "../e2e/support/tcp-proxy.js";
import { deadOwner } from "../support/engine-context.js";
import { tempFolder } from "../support/temp-folders.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A store, and followers of `servers` (one directory path, several servers) whose engines share one owner id. */
async function followersOf(servers: string[]) {
  const databasePath = join(tempFolder(), "tc.db");
  const store = await openStore(databasePath, { kind: "fleet" });
  cleanups.push(() => store.close());
  const config = resolveConfig({ databasePath }, {});
  const url = `http://127.0.0.1:${await freePort()}`;
  const owner = newOwnerId();
  const following = new Map<string, StandaloneService>();
  for (const server of servers) {
    const service = new StandaloneService({
      url,
      directory: "/workspace",
      server,
      owner,
      config,
      store,
      log: () => {},
    });
    cleanups.push(() => service.stop());
    following.set(server, service);
  }
  return { store, owner, following };
}

/** A countdown left armed in `server`'s scope by a process that is gone. */
async function plantOrphan(store: OperatorStore, server: string): Promise<string> {
  const now = Date.now();
  const id = `cd_${server}`;
  await store.change(
    arm(
      {
        id,
        sessionId: `ses_${server}`,
        directory: "/workspace",
        server,
        armedAt: now,
        deadlineAt: now + 60_000,
        owner: deadOwner(),
        leaseUntil: now,
        attempt: 0,
        todosOpen: 1,
        todosTotal: 2,
      },
      {},
    ),
  );
  return id;
}

/** Counts the statements the store is asked to run from now on, by name. */
function countStatements(store: OperatorStore): Map<string, number> {
  const counts = new Map<string, number>();
  const read = store.read.bind(store);
  function* counted<T>(script: Script<T>): Script<T> {
    let step = script.next();
    while (!step.done) {
      counts.set(step.value.name, (counts.get(step.value.name) ?? 0) + 1);
      step = script.next(yield step.value);
    }
    return step.value;
  }
  store.read = <T>(script: Script<T>) => read(counted(script));
  return counts;
}

/** Who holds the countdown `id` now. */
const ownerOf = async (store: OperatorStore, id: string) => (await store.read(countdown(id)))?.owner;

describe("the lease ticks of a replica's followers", () => {
  it("read every started follower's rows in three statements, and hand each engine its own scope's", async () => {
    const servers = ["pod-0", "pod-1", "pod-2", "pod-3"];
    const { store, owner, following } = await followersOf(servers);
    // pod-3's follower is not started: its engine recovers its own rows when it starts, and takes none before.
    for (const server of servers.slice(0, 3)) await following.get(server)!.start();
    for (const server of servers) await plantOrphan(store, server);
    const statements = countStatements(store);
    const ticks = new FollowerTicks(store, () => {});
    await ticks.tick(following);
    await Promise.all([...following.values()].map((service) => service.enforcer.settled()));

    expect(Object.fromEntries(statements)).toMatchObject({
      armedInScopes: 1,
      pendingInScopes: 1,
      sessionsToRecheckInScopes: 1,
    });
    expect(
      [...statements.keys()].filter((name) => ["armedIn", "pendingIn", "sessionsToRecheck"].includes(name)),
    ).toEqual([]);
    // Each started engine adopted the countdown of its own server, and holds that one only.
    for (const server of servers.slice(0, 3)) {
      expect(following.get(server)!.enforcer.stats().armed).toBe(1);
      expect(await ownerOf(store, `cd_${server}`)).toBe(owner);
    }
    expect(following.get("pod-3")!.enforcer.stats().armed).toBe(0);
    expect(await ownerOf(store, "cd_pod-3")).toMatch(/\/dead/);
  });

  it("hand nothing to a follower let go, or stopping, while the rows were read", async () => {
    const servers = ["pod-0", "pod-1", "pod-2"];
    const { store, owner, following } = await followersOf(servers);
    for (const service of following.values()) await service.start();
    for (const server of servers) await plantOrphan(store, server);
    const ticks = new FollowerTicks(store, () => {});
    const [, letGo, stopping] = servers.map((server) => following.get(server)!);
    const handedOut = ticks.tick(following);
    // The rows are being read: one follower is let go, another's stop is asked.
    following.delete("pod-1");
    const stopped = stopping!.stop();
    await handedOut;
    await Promise.all([following.get("pod-0")!.enforcer.settled(), stopped]);

    expect(await ownerOf(store, "cd_pod-0")).toBe(owner);
    expect(letGo!.enforcer.stats().armed).toBe(0);
    expect(await ownerOf(store, "cd_pod-1")).toMatch(/\/dead/);
    expect(await ownerOf(store, "cd_pod-2")).toMatch(/\/dead/);
  });
});
