// One setting names the database: a file path opens SQLite, a postgres:// or postgresql:// URL opens PostgreSQL. Every
// entry point (plugin, service, TUI, CLI) opens its store here, and loads only the backend it opens: each brings its
// own part of drizzle and its driver, which a CLI call (a process each time) would otherwise pay for twice.
import type { OperatorStore } from "../operator/operator.js";
import { isPostgresUrl } from "./location.js";

export interface OpenStoreOptions {
  /** Open without writing anything (no migration): the CLI's commands that only look. */
  readonly?: boolean;
  /** SQLite's busy timeout; on PostgreSQL the statement and lock timeout. */
  busyTimeoutMs?: number;
  /** What this process is, on its `replicas` row. */
  kind?: "plugin" | "service" | "fleet" | "tui" | "cli";
  /** PostgreSQL: hand back a store even while the server is down (the engine pauses and probes until it answers). */
  lazy?: boolean;
  /** PostgreSQL: see PgOpenOptions.clientTimeoutMs. */
  clientTimeoutMs?: number;
  /** PostgreSQL: connections in the pool (default 10). */
  poolSize?: number;
}

export { isPostgresUrl };

export async function openStore(location: string, options: OpenStoreOptions = {}): Promise<OperatorStore> {
  const kind = options.kind ?? "plugin";
  if (isPostgresUrl(location)) {
    // A network round trip is slower than a local lock: never wait on PostgreSQL for less than it needs to answer.
    const statementTimeoutMs = options.readonly ? 10_000 : Math.max(2000, options.busyTimeoutMs ?? 5000);
    const [{ openPg }, { PgStore }] = await Promise.all([import("../pg/open.js"), import("../pg/pg-store.js")]);
    const connection = await openPg(location, {
      readonly: options.readonly,
      statementTimeoutMs,
      lazy: options.lazy,
      clientTimeoutMs: options.clientTimeoutMs,
      poolSize: options.poolSize,
    });
    return new PgStore(connection, { kind });
  }
  const [{ openSqlite }, { SqliteStore }] = await Promise.all([
    import("../sqlite/open.js"),
    import("../sqlite/sqlite-store.js"),
  ]);
  const connection = await openSqlite(location, { readonly: options.readonly, busyTimeoutMs: options.busyTimeoutMs });
  return new SqliteStore(connection, { busyTimeoutMs: options.busyTimeoutMs, kind });
}
