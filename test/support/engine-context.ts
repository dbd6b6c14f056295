// A hand-made EngineContext over a real SqliteStore, for tests of one engine collaborator without the whole enforcer:
// the same parts the enforcer wires (one timer queue, session lanes, memories, a lifecycle) on the system clock, so
// that fake timers drive them. Failures and tracked jobs are kept for the test to look at.
import { hostname } from "node:os";
import { join } from "node:path";
import { vi } from "vitest";
import type { Config } from "../../src/config.js";
import { systemClock } from "../../src/engine/clock.js";
import type { EngineContext } from "../../src/engine/context.js";
import { Lifecycle } from "../../src/engine/lifecycle.js";
import { newOwnerId, registerOwner, unregisterOwner } from "../../src/store/owner.js";
import { SessionLanes } from "../../src/engine/session-lanes.js";
import { SessionMemories } from "../../src/engine/session-memory.js";
import { TimerQueue } from "../../src/engine/timer-queue.js";
import type { EngineStore } from "../../src/store/port.js";
import { changeSession } from "../../src/store/changes/change-session.js";
import { openSqlite, type SqliteConnection } from "../../src/store/sqlite/open.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { DIRECTORY, Rows, testConfig } from "./engine-fixture.js";
import { FakeHost } from "./fake-host.js";

export interface TestContext extends EngineContext {
  readonly host: FakeHost;
  readonly lanes: SessionLanes;
  readonly timers: TimerQueue;
  readonly lifecycle: Lifecycle;
  /** What `failed()` was told. */
  readonly failures: Array<{ operation: string; error: unknown }>;
  /** Background jobs handed to `track()` that have not settled yet. */
  readonly tracked: Set<Promise<unknown>>;
}

export interface ContextOptions {
  store: EngineStore;
  config: Config;
  owner?: string;
  host?: FakeHost;
  directory?: string;
}

export function makeContext(options: ContextOptions): TestContext {
  const { store, config } = options;
  const directory = options.directory ?? DIRECTORY;
  const host = options.host ?? new FakeHost();
  const clock = systemClock;
  const failures: Array<{ operation: string; error: unknown }> = [];
  const tracked = new Set<Promise<unknown>>();
  const failed = (operation: string, error: unknown) => void failures.push({ operation, error });
  const timers = new TimerQueue(clock, (key, error) => failed(`timer ${key}`, error));
  const lanes = new SessionLanes((error) => failed("session state change", error));
  return {
    config,
    followed: { directory, server: null },
    owner: options.owner ?? newOwnerId(),
    clock,
    store,
    host,
    timers,
    lanes,
    memories: new SessionMemories(1000, () => true),
    lifecycle: new Lifecycle(),
    failures,
    tracked,
    scope: (sessionId) => ({ sessionId, directory }),
    changeSession: (sessionId, change) => {
      const now = clock.now();
      return lanes.post(sessionId, () => store.change(changeSession({ sessionId, directory }, now, change)));
    },
    log: (level, message, extra) => host.log(level, message, extra),
    failed,
    track: <T>(job: Promise<T>) => {
      const kept: Promise<T | undefined> = job.catch((error: unknown) => {
        failed("background job", error);
        return undefined;
      });
      tracked.add(kept);
      void kept.finally(() => tracked.delete(kept));
      return kept;
    },
  };
}

/** A real SQLite file in `folder`, the store port over it, and the row helpers. */
export async function openTestStore(folder: string, config: Config = testConfig(join(folder, "state.db"))) {
  const connection: SqliteConnection = await openSqlite(join(folder, "state.db"), {
    busyTimeoutMs: config.busyTimeoutMs,
  });
  return {
    connection,
    store: new SqliteStore(connection, { busyTimeoutMs: config.busyTimeoutMs }),
    rows: new Rows(connection),
  };
}

/** Owner ids as `ownerMayBeAlive` reads them: an engine of this process that is running, or one that is gone. */
const registered = new Set<string>();
let deadSeq = 0;
export function liveOwner(): string {
  const owner = newOwnerId();
  registerOwner(owner);
  registered.add(owner);
  return owner;
}
export function deadOwner(): string {
  return `${hostname()}/${process.pid}/dead${++deadSeq}`;
}
/** An owner on another host: it cannot be proven gone, only its lease can run out. */
export function remoteOwner(name = "elsewhere"): string {
  return `${name}.example/4242/remote`;
}
export function forgetOwners(): void {
  for (const owner of registered) unregisterOwner(owner);
  registered.clear();
}

/** Lets the timers due now run, then waits until the lanes and the tracked jobs are quiet. */
export async function quiet(ctx: TestContext, more: () => Promise<void> = async () => {}): Promise<void> {
  do {
    await vi.advanceTimersByTimeAsync(0);
    await Promise.allSettled([...ctx.tracked]);
    await ctx.lanes.idle();
    await more();
  } while (ctx.tracked.size > 0 || ctx.lanes.size > 0);
}
