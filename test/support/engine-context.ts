// The engine's own context (src/engine/context.ts) over a real store, for tests of one engine collaborator without
// the whole enforcer: one timer queue, session lanes, a lifecycle and the engine's events, on the system clock so that
// fake timers drive them. What was reported as failed is kept for the test to look at.
import { rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, vi } from "vitest";
import type { Config } from "../../src/config/resolve.js";
import { systemClock } from "../../src/engine/clock.js";
import { createContext, type EngineContext } from "../../src/engine/context.js";
import { EngineEmitter } from "../../src/engine/engine-events.js";
import { Lifecycle } from "../../src/engine/lifecycle.js";
import { SessionLanes } from "../../src/engine/session-lanes.js";
import { TimerQueue } from "../../src/engine/timer-queue.js";
import { newOwnerId, registerOwner, unregisterOwner } from "../../src/store/owner.js";
import type { EngineStore } from "../../src/store/port.js";
import { openSqlite, type SqliteConnection } from "../../src/store/sqlite/open.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { DIRECTORY, Rows, tempFolder, testConfig } from "./engine-fixture.js";
import { FakeHost } from "./fake-host.js";
import { startFakeTime } from "./fake-time.js";

export interface TestContext extends EngineContext {
  readonly host: FakeHost;
  /** What was reported as failed (the context's `failed`). */
  readonly failures: Array<{ operation: string; error: unknown }>;
}

export interface ContextOptions {
  store: EngineStore;
  config: Config;
  owner?: string;
  host?: FakeHost;
  directory?: string;
}

/** The engine's own context (src/engine/context.ts) on the system clock, so that fake timers drive it. */
export function makeContext(options: ContextOptions): TestContext {
  const { store, config } = options;
  const host = options.host ?? new FakeHost();
  const clock = systemClock;
  const events = new EngineEmitter((event, error) => failed(`a listener of ${event}`, error));
  const failures: Array<{ operation: string; error: unknown }> = [];
  const failed = (operation: string, error: unknown) => void failures.push({ operation, error });
  const ctx = createContext({
    config,
    followed: { directory: options.directory ?? DIRECTORY, server: null },
    owner: options.owner ?? newOwnerId(),
    clock,
    store,
    host,
    timers: new TimerQueue(clock, (key, error) => failed(`timer ${key}`, error)),
    lanes: new SessionLanes((error) => failed("session state change", error)),
    lifecycle: new Lifecycle(),
    events,
    failed,
  });
  return { ...ctx, host, failures };
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

/**
 * A test's folder and its SQLite file, opened once or more (each opening is another process's view); `end()` closes
 * every connection, deletes the folder, forgets the owners registered, and brings the real timers back.
 */
export class TestFiles {
  readonly folder = tempFolder();
  private readonly connections: SqliteConnection[] = [];

  async open(config?: Config) {
    const opened = await openTestStore(this.folder, config);
    this.connections.push(opened.connection);
    return opened;
  }

  end(): void {
    for (const connection of this.connections.splice(0)) connection.close();
    rmSync(this.folder, { recursive: true, force: true });
    forgetOwners();
    vi.useRealTimers();
  }
}

// The test's folder and its file, as `useTestFiles()` opens them before each test: live bindings, so a test file
// imports them once and reads them as its own.
/** The test's folder and its connections: `files.open()` is one more, as another process (or a restart) opens it. */
export let files: TestFiles;
export let folder: string;
export let connection: SqliteConnection;
export let store: SqliteStore;
export let rows: Rows;
/** Another process's connection to the same file (with `elsewhere: true`). */
export let elsewhere: SqliteStore;

/**
 * Before each test of the file: fake time from START (unless `fakeTime: false`), a fresh folder and its SQLite file
 * opened (unless `open: false`), and, with `elsewhere`, a second connection to it; after each, every connection
 * closed, the folder deleted and the real timers back. A file's own hooks registered after this one run after its
 * `beforeEach` and before its `afterEach`.
 */
export function useTestFiles(options: { fakeTime?: boolean; open?: boolean; elsewhere?: boolean } = {}): void {
  beforeEach(async () => {
    if (options.fakeTime !== false) startFakeTime();
    files = new TestFiles();
    folder = files.folder;
    if (options.open !== false) ({ connection, store, rows } = await files.open());
    if (options.elsewhere) ({ store: elsewhere } = await files.open());
  });
  afterEach(() => {
    files.end();
  });
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
