// The store over one SQLite file (better-sqlite3 under Node, bun:sqlite inside OpenCode). A state change's script runs
// synchronously inside one BEGIN IMMEDIATE transaction (read-then-write from several processes must not hit
// SQLITE_BUSY_SNAPSHOT); every promise returned here is already settled when the method returns. Liveness on one
// machine is a pid: the heartbeat rows only tell who is there, and that the file is still the one opened.
import { hostname } from "node:os";
import type { OperatorStore, ReplicaState } from "../operator/operator.js";
import { ownerMayBeAlive } from "../owner.js";
import type { SqlReader } from "../operator/reader.js";
import { runSync, type Change, type Script } from "../script.js";
import type { Statements } from "../statements.js";
import type { StoreProblem } from "../types.js";
import type { SqliteConnection } from "./connection.js";
import { fileSize, quickCheck, schemaState } from "./diagnostics.js";
import { fileIdentity, sqliteProblemOf, StoreGoneError } from "./problems.js";
import { prepareStatements } from "./statements.js";

export interface SqliteStoreOptions {
  busyTimeoutMs?: number;
  /** What this process is, on its `replicas` row. */
  kind?: string;
}

/** A settled promise of `work`'s result or error. */
function settled<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error);
  }
}

export class SqliteStore implements OperatorStore {
  readonly dialect = "sqlite" as const;
  readonly location: string;
  readonly reader: SqlReader;
  readonly roster = undefined;
  private prepared: Statements | undefined;
  private readonly identity: string | undefined;
  private readonly startedAt = Date.now();

  constructor(
    readonly connection: SqliteConnection,
    private readonly options: SqliteStoreOptions = {},
  ) {
    this.location = connection.path;
    this.identity = fileIdentity(connection.path);
    const { raw } = connection;
    this.reader = {
      dialect: "sqlite",
      all: async <T>(text: string, ...params: unknown[]) => raw.all<T>(text, ...params),
    };
  }

  get migrated() {
    return this.connection.migration;
  }

  /** Prepared at the first script rather than at open: a CLI call that only queries through `reader` uses none. */
  private get statements(): Statements {
    return (this.prepared ??= prepareStatements(this.connection.db, this.connection.raw));
  }

  read<T>(script: Script<T>): Promise<T> {
    return settled(() => runSync(script, this.statements));
  }

  change<T>(change: Change<T>): Promise<T> {
    return settled(() => {
      const statements = this.statements;
      return this.connection.raw.immediate(() => runSync(change.script(), statements));
    });
  }

  // ── liveness ──────────────────────────────────────────────────────────────

  /**
   * Also clears the rows of this host's other processes that are gone (a crash never retires its row). Rows of this
   * very process stay: the TUI and the server plugin of one OpenCode share its pid but not their memory.
   */
  heartbeat(owner: string, leaseMs: number, directory?: string): Promise<void> {
    return settled(() => {
      this.checkSameFile();
      const { raw } = this.connection;
      for (const { id } of raw.all<{ id: string }>(
        "SELECT id FROM replicas WHERE host = ? AND pid <> ?",
        hostname(),
        process.pid,
      ))
        if (!ownerMayBeAlive(id)) raw.run("DELETE FROM replicas WHERE id = ?", id);
      const [host, pid] = owner.split("/");
      const now = Date.now();
      raw.run(
        `INSERT INTO replicas (id, kind, host, pid, started_at, heartbeat_at, lease_ms, directory) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, lease_ms = excluded.lease_ms`,
        owner,
        this.options.kind ?? "plugin",
        host || hostname(),
        Number(pid) || process.pid,
        this.startedAt,
        now,
        Math.trunc(leaseMs),
        directory ?? null,
      );
    });
  }

  ownerAlive(owner: string | null, leaseUntil: number | null, now: number): boolean {
    return this.statements.ownerAlive(owner, leaseUntil, now);
  }

  retire(owner: string): Promise<void> {
    return settled(() => void this.connection.raw.run("DELETE FROM replicas WHERE id = ?", owner));
  }

  // ── upkeep ────────────────────────────────────────────────────────────────

  /** A committed header write, never waiting for a lock: it fails on a read-only, full, locked or damaged file. */
  probe(): Promise<void> {
    return settled(() => {
      this.checkSameFile();
      const { raw } = this.connection;
      raw.exec("PRAGMA busy_timeout = 0");
      try {
        const version = raw.all<{ user_version: number }>("PRAGMA user_version")[0]?.user_version ?? 0;
        raw.exec(`PRAGMA user_version = ${(version + 1) % 1_000_000}`);
      } finally {
        raw.exec(`PRAGMA busy_timeout = ${Math.trunc(this.options.busyTimeoutMs ?? 5000)}`);
      }
    });
  }

  problemOf(error: unknown): StoreProblem | undefined {
    return sqliteProblemOf(error);
  }

  async close(): Promise<void> {
    this.connection.close();
  }

  /** A deleted or replaced file raises no error by itself (the old inode keeps working): look for it. */
  private checkSameFile(): void {
    if (this.identity !== undefined && fileIdentity(this.location) !== this.identity) throw new StoreGoneError();
  }

  // ── what operators ask ────────────────────────────────────────────────────

  async schemaState() {
    return schemaState(this.connection.raw);
  }

  async diagnostics() {
    const { bytes, walBytes } = fileSize(this.location);
    return {
      driver: this.connection.driver,
      checkedBy: "PRAGMA quick_check",
      integrity: quickCheck(this.connection.raw),
      bytes,
      walBytes,
    };
  }

  async replicas(): Promise<ReplicaState[]> {
    const now = Date.now();
    const rows = this.connection.raw.all<Record<string, string | number>>(
      `SELECT r.id, r.kind, r.host, r.pid, r.heartbeat_at, r.lease_ms,
        (SELECT count(*) FROM countdowns c WHERE c.owner = r.id AND c.state = 'armed') AS countdowns
       FROM replicas r ORDER BY r.started_at`,
    );
    return rows.map((r) => {
      const ageMs = now - Number(r.heartbeat_at);
      return {
        id: String(r.id),
        kind: String(r.kind),
        host: String(r.host),
        pid: Number(r.pid),
        heartbeatAgeMs: ageMs,
        leaseMs: Number(r.lease_ms),
        alive: ownerMayBeAlive(String(r.id)) && ageMs <= Number(r.lease_ms),
        countdowns: Number(r.countdowns),
      };
    });
  }

  async liveness() {
    return ownerMayBeAlive;
  }
}
