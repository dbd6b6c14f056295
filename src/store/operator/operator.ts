// The store as an operator's tools see it (the CLI, the TUI panel, the service): the engine's port, plus what only
// operators ask — the schema's migrations, the file's or server's health, who is alive, raw SQL for the views users
// query, and the fleet's servers where the database can serve a fleet. Both backends answer every question; none
// needs to know which one it is talking to.
import type { EngineStore } from "../port.js";
import type { SqlReader } from "./reader.js";
import type { ServerRoster } from "./roster.js";

export interface MigrationReport {
  /** Migrations applied when this store was opened. */
  applied: number;
  /** When the newest migration applied was made (epoch ms), if any. */
  latest: number | null;
  /** Migrations this version ships. */
  shipped: number;
}

export interface SchemaState {
  shipped: number;
  applied: number;
  latestShipped: number | null;
  latestApplied: number | null;
  pending: number;
  /** The database was migrated by a newer version of the enforcer. */
  newer: boolean;
}

export interface Integrity {
  ok: boolean;
  messages: string[];
}

export interface Diagnostics {
  /** `better-sqlite3`, `bun:sqlite`, `pg` or `bun-sql`. */
  driver: string;
  /** What checked the integrity: SQLite's `PRAGMA quick_check`, or the server answering. */
  checkedBy: string;
  integrity: Integrity;
  /** SQLite: the file and its write-ahead log. */
  bytes?: number;
  walBytes?: number;
  /** PostgreSQL: the server's version. */
  serverVersion?: string;
}

/** A process that said it is alive (`replicas`), with its heartbeat's age. */
export interface ReplicaState {
  id: string;
  kind: string;
  host: string;
  pid: number;
  heartbeatAgeMs: number;
  leaseMs: number;
  alive: boolean;
  /** Countdowns it holds. */
  countdowns: number;
}

export type Dialect = "sqlite" | "postgresql";

export interface OperatorStore extends EngineStore {
  readonly dialect: Dialect;
  /** Raw SQL for what operators read (the views users query too). */
  readonly reader: SqlReader;
  /** What migrating at open did (nothing for a read-only open; unknown while a lazily opened server is down). */
  readonly migrated: MigrationReport | undefined;
  schemaState(): Promise<SchemaState>;
  diagnostics(): Promise<Diagnostics>;
  replicas(): Promise<ReplicaState[]>;
  /** Who counts as alive now, as this database judges liveness (a pid on this host, or a heartbeat). */
  liveness(): Promise<(owner: string) => boolean>;
  /** The servers a fleet shares; undefined where the database cannot serve a fleet (a machine's own SQLite file). */
  readonly roster: ServerRoster | undefined;
}
