// What `doctor` and `migrate` look at on a PostgreSQL server: the server's version, the schema's migration state,
// and the replicas holding leases with the age of their heartbeats by the database's clock.
import { sql } from "drizzle-orm";
import { readMigrationFiles } from "drizzle-orm/migrator";
import type { ReplicaState, SchemaState } from "../operator/operator.js";
import type { PgConnection } from "./connection.js";
import { lastAppliedPgMigration } from "./migrate.js";
import { SHIPPED_PG_MIGRATIONS } from "./open.js";
import { DB_NOW_MS } from "./rows.js";

export async function pgSchemaState(
  connection: PgConnection,
  migrationsFolder = SHIPPED_PG_MIGRATIONS,
): Promise<SchemaState> {
  const shipped = readMigrationFiles({ migrationsFolder });
  const latestApplied = await lastAppliedPgMigration(connection.db);
  const applied =
    latestApplied === null
      ? 0
      : Number(
          (await connection.rows<{ n: string }>(sql`SELECT count(*) AS n FROM drizzle.__drizzle_migrations`))[0]!.n,
        );
  const latestShipped = shipped.at(-1)?.folderMillis ?? null;
  return {
    shipped: shipped.length,
    applied,
    latestShipped,
    latestApplied,
    pending: shipped.filter((m) => latestApplied === null || m.folderMillis > latestApplied).length,
    newer: latestApplied !== null && latestShipped !== null && latestApplied > latestShipped,
  };
}

export async function serverVersion(connection: PgConnection): Promise<string> {
  const rows = await connection.rows<{ server_version: string }>(sql`SHOW server_version`);
  return rows[0]?.server_version ?? "unknown";
}

/** Replicas with their heartbeat's age by the database's clock and the countdowns each holds. */
export async function replicaStates(connection: PgConnection): Promise<ReplicaState[]> {
  const rows = await connection.rows<Record<string, string | number>>(
    sql.raw(`SELECT r.id, r.kind, r.host, r.pid, ${DB_NOW_MS} - r.heartbeat_at AS age, r.lease_ms,
      (SELECT count(*) FROM countdowns c WHERE c.owner = r.id AND c.state = 'armed') AS countdowns
    FROM replicas r ORDER BY r.started_at`),
  );
  return rows.map((r) => ({
    id: String(r.id),
    kind: String(r.kind),
    host: String(r.host),
    pid: Number(r.pid),
    heartbeatAgeMs: Number(r.age),
    leaseMs: Number(r.lease_ms),
    alive: Number(r.age) <= Number(r.lease_ms),
    countdowns: Number(r.countdowns),
  }));
}
