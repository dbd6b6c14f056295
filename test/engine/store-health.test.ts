// StoreHealth promises: an error the store calls its own pauses the enforcer with one `paused` report (however
// many failures follow); anything else is not absorbed. While paused, the store is probed every storeProbeMs, one
// probe at a time, and the first probe that works ends the pause with one store_resumed (problem, pausedForMs,
// failedWrites). A deleted or replaced file (found by the lease loop's heartbeat, or by a probe while paused for
// another reason) is reported as gone, once, and never probed again: only a restart helps.
// Runs on a real SQLite file; a second connection holding BEGIN EXCLUSIVE is the lock another process would hold.
import Database from "better-sqlite3";
import { renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "../../src/engine/clock.js";
import type { EngineEvents } from "../../src/engine/engine-events.js";
import { StoreHealth, type StoreHealthListener } from "../../src/engine/store-health.js";
import { TimerQueue } from "../../src/engine/timer-queue.js";
import type { EngineStore, StoreProblem } from "../../src/store/port.js";
import { changeSession } from "../../src/store/changes/change-session.js";
import { newOwnerId } from "../../src/store/owner.js";
import { openSqlite, type SqliteConnection } from "../../src/store/sqlite/open.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { tempFolder } from "../support/engine-fixture.js";
import { advance, useFakeTime } from "../support/fake-time.js";

useFakeTime();

const PROBE_MS = 200;

type Reported =
  | { event: "store_paused"; payload: EngineEvents["store_paused"] }
  | { event: "store_resumed"; payload: EngineEvents["store_resumed"] };

/** A listener that keeps what it was told, in order. */
function watch(): StoreHealthListener & { seen: Reported[] } {
  const seen: Reported[] = [];
  return {
    seen,
    paused: (payload) => void seen.push({ event: "store_paused", payload }),
    resumed: (payload) => void seen.push({ event: "store_resumed", payload }),
  };
}

interface Setup {
  folder: string;
  dbPath: string;
  connection: SqliteConnection;
  store: SqliteStore;
  timers: TimerQueue;
  health: StoreHealth;
  seen: Reported[];
  lockers: Database.Database[];
}

let s: Setup;

beforeEach(async () => {
  const folder = tempFolder("tc-health-");
  const dbPath = join(folder, "state.db");
  // No busy timeout: a locked write fails at once instead of blocking the (synchronous) driver for real seconds.
  const connection = await openSqlite(dbPath, { busyTimeoutMs: 0 });
  const store = new SqliteStore(connection, { busyTimeoutMs: 0 });
  const timers = new TimerQueue(systemClock);
  const listener = watch();
  const health = new StoreHealth(store, timers, listener, PROBE_MS);
  s = { folder, dbPath, connection, store, timers, health, seen: listener.seen, lockers: [] };
});

afterEach(() => {
  s.timers.stop();
  for (const locker of s.lockers) if (locker.open) locker.close();
  s.connection.close();
  rmSync(s.folder, { recursive: true, force: true });
});

/** Another process holding the write lock. */
function lock(): Database.Database {
  const locker = new Database(s.dbPath);
  locker.exec("BEGIN EXCLUSIVE");
  s.lockers.push(locker);
  return locker;
}

function unlock(locker: Database.Database): void {
  locker.exec("ROLLBACK");
  locker.close();
}

/** A real write through the store; returns the error it failed with. */
async function failedWrite(): Promise<unknown> {
  const write = changeSession({ sessionId: "ses_h", directory: "/work/project" }, Date.now(), {});
  const error = await s.store.change(write).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeDefined();
  return error;
}

/** The lease loop's heartbeat; returns the error it failed with, if it did. */
async function heartbeat(): Promise<unknown> {
  return s.store.heartbeat(newOwnerId(), 3000).then(
    () => undefined,
    (e: unknown) => e,
  );
}

const paused = () => s.seen.filter((r) => r.event === "store_paused");
const resumed = () => s.seen.filter((r) => r.event === "store_resumed");

describe("errors that are not the store's", () => {
  it("are not absorbed: no pause, no event, no probe", async () => {
    expect(s.health.report(new TypeError("cannot read properties of undefined"))).toBe(false);
    expect(s.health.report("a string")).toBe(false);
    expect(s.health.report(undefined)).toBe(false);
    expect(s.health.healthy).toBe(true);
    expect(s.health.state).toBeUndefined();
    expect(s.seen).toEqual([]);
    expect(s.timers.has("store-probe")).toBe(false);
  });
});

describe("a locked file", () => {
  it("pauses with one store_paused that says what and where, however many writes fail after", async () => {
    lock();
    const since = performance.now(); // the monotonic clock: a pause is elapsed time
    expect(s.health.report(await failedWrite())).toBe(true);
    expect(s.health.healthy).toBe(false);
    expect(paused()).toEqual([
      {
        event: "store_paused",
        payload: {
          problem: "locked",
          message: expect.stringMatching(
            /^todo-continuation paused: the database .* is locked by another process .*OpenCode is not affected; it is tried again every 0\.2 s\.$/,
          ),
        },
      },
    ]);
    expect(paused()[0]!.payload.message).toContain(s.store.location);
    for (let i = 0; i < 4; i++) expect(s.health.report(await failedWrite())).toBe(true);
    expect(paused()).toHaveLength(1);
    expect(s.health.state).toEqual({ kind: "locked", since, failures: 5 });
  });

  it("state is a copy: changing it does not change the health", async () => {
    lock();
    s.health.report(await failedWrite());
    const state = s.health.state!;
    state.failures = 100;
    expect(s.health.state?.failures).toBe(1);
  });

  it("is probed every storeProbeMs while locked, and resumes at the first probe after the lock is gone", async () => {
    const probe = vi.spyOn(s.store, "probe");
    const locker = lock();
    s.health.report(await failedWrite());
    s.health.report(await failedWrite());
    await advance(PROBE_MS - 1);
    expect(probe).toHaveBeenCalledTimes(0);
    await advance(1);
    expect(probe).toHaveBeenCalledTimes(1);
    await advance(4 * PROBE_MS);
    expect(probe).toHaveBeenCalledTimes(5);
    expect(s.health.healthy).toBe(false);
    expect(resumed()).toEqual([]);
    unlock(locker);
    await advance(PROBE_MS - 1);
    expect(s.health.healthy).toBe(false);
    await advance(1);
    expect(probe).toHaveBeenCalledTimes(6);
    expect(s.health.healthy).toBe(true);
    expect(s.health.state).toBeUndefined();
    expect(resumed()).toEqual([
      { event: "store_resumed", payload: { problem: "locked", pausedForMs: 6 * PROBE_MS, failedWrites: 2 } },
    ]);
    // Healthy again: no more probes, and the store takes writes.
    await advance(10 * PROBE_MS);
    expect(probe).toHaveBeenCalledTimes(6);
    expect(s.timers.has("store-probe")).toBe(false);
    await s.store.change(changeSession({ sessionId: "ses_h", directory: "/work/project" }, Date.now(), {}));
  });

  it("a second failure after a resume is a new pause with its own events and counts", async () => {
    let locker = lock();
    s.health.report(await failedWrite());
    s.health.report(await failedWrite());
    unlock(locker);
    await advance(PROBE_MS);
    locker = lock();
    s.health.report(await failedWrite());
    expect(paused()).toHaveLength(2);
    expect(s.health.state?.failures).toBe(1);
    await advance(3 * PROBE_MS);
    unlock(locker);
    await advance(PROBE_MS);
    expect(s.seen.map((r) => r.event)).toEqual(["store_paused", "store_resumed", "store_paused", "store_resumed"]);
    expect(resumed()[1]!.payload).toEqual({ problem: "locked", pausedForMs: 4 * PROBE_MS, failedWrites: 1 });
  });
});

describe("a deleted or replaced file", () => {
  it("an intact file is not reported", async () => {
    expect(await heartbeat()).toBeUndefined();
    expect(s.health.healthy).toBe(true);
    expect(s.seen).toEqual([]);
  });

  it.each([
    [
      "deleted",
      () => {
        for (const suffix of ["", "-wal", "-shm"]) rmSync(`${s.dbPath}${suffix}`, { force: true });
      },
    ],
    [
      "replaced",
      () => {
        const other = new Database(join(s.folder, "other.db"));
        other.exec("CREATE TABLE t (x)");
        other.close();
        renameSync(join(s.folder, "other.db"), s.dbPath);
      },
    ],
  ])("%s: paused as gone, said once, never probed", async (_name, change) => {
    const probe = vi.spyOn(s.store, "probe");
    change();
    expect(s.health.report(await heartbeat())).toBe(true);
    expect(s.health.state?.kind).toBe("gone");
    expect(paused()).toEqual([
      {
        event: "store_paused",
        payload: {
          problem: "gone",
          message: expect.stringMatching(
            /was deleted or replaced while this process had it open.* restart OpenCode \(or the service\) to start a new file\.$/,
          ),
        },
      },
    ]);
    // Found again (another engine's heartbeat on the same store): counted, never said again.
    for (let i = 0; i < 5; i++) s.health.report(await heartbeat());
    expect(paused()).toHaveLength(1);
    expect(s.health.state).toMatchObject({ kind: "gone", failures: 6 });
    expect(s.timers.has("store-probe")).toBe(false);
    await advance(100 * PROBE_MS);
    expect(probe).not.toHaveBeenCalled();
    expect(s.health.healthy).toBe(false);
    expect(resumed()).toEqual([]);
  });

  it("replaced while paused for a lock: the lock going away does not resume onto the old file", async () => {
    const locker = lock();
    s.health.report(await failedWrite());
    const other = new Database(join(s.folder, "other.db"));
    other.exec("CREATE TABLE t (x)");
    other.close();
    renameSync(join(s.folder, "other.db"), s.dbPath);
    unlock(locker);
    await advance(10 * PROBE_MS);
    expect(s.health.healthy).toBe(false);
    expect(resumed()).toEqual([]);
  });

  it("replaced while paused for a lock: the next probe says gone once, and probing stops", async () => {
    const probe = vi.spyOn(s.store, "probe");
    lock();
    s.health.report(await failedWrite());
    const other = new Database(join(s.folder, "other.db"));
    other.exec("CREATE TABLE t (x)");
    other.close();
    renameSync(join(s.folder, "other.db"), s.dbPath);
    await advance(PROBE_MS);
    expect(s.health.state).toMatchObject({ kind: "gone", failures: 2 });
    expect(paused().map((r) => r.payload.problem)).toEqual(["locked", "gone"]);
    expect(paused()[1]!.payload.message).toMatch(/restart OpenCode/);
    const probes = probe.mock.calls.length;
    await advance(20 * PROBE_MS);
    expect(probe.mock.calls.length).toBe(probes);
  });
});

describe("the length of a pause", () => {
  it("is elapsed time: a wall clock set back by hours during the pause does not change it", async () => {
    const locker = lock();
    s.health.report(await failedWrite());
    await advance(3 * PROBE_MS);
    vi.setSystemTime(Date.now() - 3 * 3_600_000);
    unlock(locker);
    await advance(PROBE_MS);
    expect(resumed()).toEqual([
      { event: "store_resumed", payload: { problem: "locked", pausedForMs: 4 * PROBE_MS, failedWrites: 1 } },
    ]);
  });
});

// A store whose probe is asynchronous (a database server): StoreHealth only sees the port.
describe("with an asynchronous store", () => {
  function fakeStore(problem: StoreProblem | undefined) {
    let probing = 0;
    let maxProbing = 0;
    let probes = 0;
    let healthyAfter = Infinity;
    const store: Pick<EngineStore, "location" | "problemOf" | "probe"> = {
      location: "postgres://db.internal/continuation",
      problemOf: (error) => (error instanceof Error && error.message === "store failure" ? problem : undefined),
      probe: async () => {
        probes++;
        probing++;
        maxProbing = Math.max(maxProbing, probing);
        // Each probe takes longer than the interval between probes.
        await new Promise((resolve) => setTimeout(resolve, 3 * PROBE_MS));
        probing--;
        if (probes < healthyAfter) throw new Error("still down");
      },
    };
    return {
      store: store as EngineStore,
      stats: () => ({ probes, maxProbing }),
      healAt: (n: number) => (healthyAfter = n),
    };
  }

  it("a slow probe is never overlapped by the next one, and the pause ends when one succeeds", async () => {
    const fake = fakeStore("unavailable");
    const timers = new TimerQueue(systemClock);
    const events = watch();
    const { seen } = events;
    const health = new StoreHealth(fake.store, timers, events, PROBE_MS);
    expect(health.report(new Error("store failure"))).toBe(true);
    expect(seen[0]?.payload).toMatchObject({
      problem: "unavailable",
      message: expect.stringContaining("postgres://db.internal/continuation cannot be read or written"),
    });
    fake.healAt(3);
    // Probe n starts at n·200 + (n−1)·600 ms and takes 600 ms: the third succeeds at 3·200 + 3·600 = 2400 ms.
    await advance(2399);
    expect(health.healthy).toBe(false);
    await advance(1);
    expect(health.healthy).toBe(true);
    expect(fake.stats()).toEqual({ probes: 3, maxProbing: 1 });
    expect(seen.map((r) => r.event)).toEqual(["store_paused", "store_resumed"]);
    expect(seen[1]?.payload).toEqual({ problem: "unavailable", pausedForMs: 2400, failedWrites: 1 });
    timers.stop();
  });

  it("a failure the store calls gone is not probed either", async () => {
    const fake = fakeStore("gone");
    const timers = new TimerQueue(systemClock);
    const events = watch();
    const { seen } = events;
    const health = new StoreHealth(fake.store, timers, events, PROBE_MS);
    expect(health.report(new Error("store failure"))).toBe(true);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.payload).toMatchObject({ problem: "gone", message: expect.stringMatching(/restart OpenCode/) });
    await advance(100 * PROBE_MS);
    expect(fake.stats().probes).toBe(0);
    expect(health.healthy).toBe(false);
  });

  it("the probe interval in the message is given in seconds", () => {
    const events = watch();
    const { seen } = events;
    const timers = new TimerQueue(systemClock);
    new StoreHealth(fakeStore("full").store, timers, events, 5000).report(new Error("store failure"));
    expect(seen[0]?.payload).toMatchObject({
      problem: "full",
      message: expect.stringMatching(/cannot grow \(the disk is full\): store failure\. .*tried again every 5 s\.$/),
    });
    timers.stop();
  });
});
