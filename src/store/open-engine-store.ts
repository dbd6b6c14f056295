// One setting names the database: a file path opens SQLite, a postgres:// or postgresql:// URL opens PostgreSQL.
// Every entry point (plugin, service, TUI, CLI) opens its store here.
import type { EngineStore } from "./port.js";
import { isPostgresUrl, openPg } from "./pg/open.js";
import { PgStore } from "./pg/pg-store.js";
import { openStore } from "./sqlite/open.js";
import { SqliteStore } from "./sqlite/sqlite-store.js";

export interface EngineStoreOptions {
  /** SQLite's busy timeout; on PostgreSQL the statement and lock timeout. */
  busyTimeoutMs?: number;
  /** What this process is, on PostgreSQL's replica row. */
  kind?: "plugin" | "service" | "fleet" | "tui" | "cli";
  /** PostgreSQL: hand back a store even while the server is down (the engine pauses and probes until it answers). */
  lazy?: boolean;
  /** PostgreSQL: see PgOpenOptions.clientTimeoutMs. */
  clientTimeoutMs?: number;
  /** PostgreSQL: connections in the pool (default 10). */
  poolSize?: number;
}

export { isPostgresUrl };

/** A store with its raw reader: what the engine changes, and what operators read (CLI, TUI panel). */
export type OperatorStore = (SqliteStore | PgStore) & EngineStore;

export async function openEngineStore(location: string, options: EngineStoreOptions = {}): Promise<OperatorStore> {
  if (isPostgresUrl(location)) {
    // A network round trip is slower than a local lock: never wait on PostgreSQL for less than it needs to answer.
    const statementTimeoutMs = Math.max(2000, options.busyTimeoutMs ?? 5000);
    const connection = await openPg(location, {
      statementTimeoutMs,
      lazy: options.lazy,
      clientTimeoutMs: options.clientTimeoutMs,
      poolSize: options.poolSize,
    });
    return new PgStore(connection, { kind: options.kind ?? "plugin" });
  }
  return new SqliteStore(await openStore(location, { busyTimeoutMs: options.busyTimeoutMs }), options);
}
