// A real engine on a real SQLite file in a temp folder, driven through a FakeHost.
import { rmSync } from "node:fs";
import { resolveConfig, type Config } from "../../src/config/resolve.js";
import type { Clock } from "../../src/engine/clock.js";
import { Enforcer } from "../../src/engine/enforcer.js";
import type { NoticeChannels } from "../../src/engine/notice-sender.js";
import type { OperatorStore } from "../../src/store/operator/operator.js";
import type { SqliteConnection } from "../../src/store/sqlite/open.js";
import { FakeHost } from "./fake-host.js";
import { tempFolder } from "./temp-folders.js";
import { waitFor } from "./wait-for.js";
import { openTestDatabase, sqliteRows, TEST_BACKEND, type TestBackend, type TestRows } from "./test-database.js";

export const DIRECTORY = "/work/project";

export interface AuditRowView {
  id: number;
  at: number;
  session_id: string | null;
  event: string;
  reason: string | null;
  detail: Record<string, unknown>;
}

export { tempFolder };

export function testConfig(dbPath: string, overrides: Partial<Config> = {}): Config {
  return { ...resolveConfig({}, {}), databasePath: dbPath, ...overrides };
}

export class Rows {
  private readonly store: { raw: TestRows };

  constructor(source: SqliteConnection | TestRows) {
    this.store = { raw: "raw" in source ? sqliteRows(source) : source };
  }

  audit(sessionId?: string): AuditRowView[] {
    const rows = sessionId
      ? this.store.raw.all<Omit<AuditRowView, "detail"> & { detail: string }>(
          "SELECT * FROM audit_events WHERE session_id = ? ORDER BY id",
          sessionId,
        )
      : this.store.raw.all<Omit<AuditRowView, "detail"> & { detail: string }>("SELECT * FROM audit_events ORDER BY id");
    return rows.map((r) => ({ ...r, detail: JSON.parse(r.detail) as Record<string, unknown> }));
  }

  /** `event:reason` pairs of a session, in order: the audit trail at a glance. */
  trail(sessionId: string): string[] {
    return this.audit(sessionId).map((r) => (r.reason ? `${r.event}:${r.reason}` : r.event));
  }

  countdowns(
    sessionId?: string,
  ): Array<Record<string, unknown> & { id: string; state: string; end_reason: string | null }> {
    return sessionId
      ? this.store.raw.all("SELECT * FROM countdowns WHERE session_id = ? ORDER BY armed_at, rowid", sessionId)
      : this.store.raw.all("SELECT * FROM countdowns ORDER BY armed_at, rowid");
  }

  injections(sessionId?: string): Array<Record<string, unknown> & { id: string; status: string }> {
    return sessionId
      ? this.store.raw.all("SELECT * FROM injections WHERE session_id = ? ORDER BY created_at, rowid", sessionId)
      : this.store.raw.all("SELECT * FROM injections ORDER BY created_at, rowid");
  }

  /** A session's parks, oldest first, their detail parsed. */
  parks(sessionId: string): Array<Record<string, unknown> & { reason: string; detail: Record<string, unknown> }> {
    return this.store.raw
      .all<Record<string, unknown> & { reason: string; detail: string }>(
        "SELECT * FROM parks WHERE session_id = ? ORDER BY parked_at",
        sessionId,
      )
      .map((r) => ({ ...r, detail: JSON.parse(r.detail) as Record<string, unknown> }));
  }

  /** A session's runs of the `verify` command, oldest first. */
  verifications(sessionId: string): Array<Record<string, unknown> & { state: string; failures: number }> {
    return this.store.raw.all("SELECT * FROM verifications WHERE session_id = ? ORDER BY started_at", sessionId);
  }

  session(sessionId: string): Record<string, unknown> | undefined {
    return this.store.raw.all<Record<string, unknown>>("SELECT * FROM sessions WHERE session_id = ?", sessionId)[0];
  }
}

/**
 * With real timers: waits until no countdown is armed and no continuation pending in the file, then for the engine's
 * work in flight. A state to wait for, not a time: on a loaded machine a 50 ms countdown may end much later.
 */
export async function drained(f: Pick<EngineFixture, "db" | "enforcer">, timeoutMs = 15_000): Promise<void> {
  const open = () =>
    f.db.all<{ n: number }>(
      "SELECT (SELECT count(*) FROM countdowns WHERE state = 'armed') + (SELECT count(*) FROM injections WHERE status = 'pending') AS n",
    )[0]!.n;
  await waitFor(
    () => `nothing armed or pending (${open()} left)`,
    async () => {
      await f.enforcer.settled();
      return open() === 0;
    },
    { timeoutMs, interval: 20 },
  );
  await f.enforcer.settled();
}

/** Engines running now (closed ones leave): fake time waits for their databases to answer (see fake-time.ts). */
export const liveFixtures = new Set<Pick<EngineFixture, "quiet" | "backend">>();

export interface EngineFixture {
  folder: string;
  /** The SQLite file, or the PostgreSQL URL (TC_TEST_STORE=postgres). */
  dbPath: string;
  /** The SQLite connection itself: only for tests about the file (it throws on PostgreSQL). */
  store: SqliteConnection;
  /** Rows, read and written synchronously on either backend. */
  db: TestRows;
  /** The store the engine was given (a test may slow one of its calls down). */
  port: OperatorStore;
  backend: TestBackend;
  /** Resolves once the database has answered every call the engine made (instant on SQLite). */
  quiet(): Promise<void>;
  host: FakeHost;
  enforcer: Enforcer;
  config: Config;
  rows: Rows;
  /** Disposes the engine and closes the file (the folder stays for a successor). */
  close(): Promise<void>;
  /** Closes and deletes the folder. */
  destroy(): Promise<void>;
}

export async function startEngine(
  options: {
    folder?: string;
    host?: FakeHost;
    config?: Partial<Config>;
    start?: boolean;
    directory?: string;
    /** The run's backend (TC_TEST_STORE) unless a test needs one in particular. */
    backend?: TestBackend;
    /** The engine's clock, when it is not this machine's (a replica on another host). */
    clock?: Clock;
    /** The owner id a fleet replica gives the engines of the servers it follows. */
    owner?: string;
    /** Where notices go (none by default). */
    noticeChannels?: NoticeChannels;
  } = {},
): Promise<EngineFixture> {
  const folder = options.folder ?? tempFolder();
  const backend = options.backend ?? TEST_BACKEND;
  const opened = await openTestDatabase(folder, { toast: true, ...options.config }.busyTimeoutMs ?? 1000, backend);
  const dbPath = opened.location;
  const config = testConfig(dbPath, { toast: true, ...options.config });
  const host = options.host ?? new FakeHost();
  const enforcer = new Enforcer({
    config,
    store: opened.store,
    host,
    directory: options.directory ?? DIRECTORY,
    clock: options.clock,
    owner: options.owner,
    noticeChannels: options.noticeChannels,
  });
  if (options.start !== false) await enforcer.start();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await enforcer.dispose();
    await opened.store.close();
    liveFixtures.delete(fixture);
  };
  const fixture: EngineFixture = {
    folder,
    dbPath,
    get store(): SqliteConnection {
      if (!opened.file) throw new Error("this test looks at the SQLite file itself: it runs on SQLite only");
      return opened.file;
    },
    db: opened.rows,
    port: opened.store,
    backend,
    quiet: opened.quiet,
    host,
    enforcer,
    config,
    rows: new Rows(opened.rows),
    close,
    destroy: async () => {
      await close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
  liveFixtures.add(fixture);
  return fixture;
}
