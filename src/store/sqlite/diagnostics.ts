// What `doctor` and `migrate` look at in a SQLite file: its schema's migration state, its integrity, its size.
import { readMigrationFiles } from "drizzle-orm/migrator";
import { statSync } from "node:fs";
import type { Integrity, SchemaState } from "../operator/operator.js";
import type { RawDatabase } from "./connection.js";
import { lastAppliedMigration, MIGRATIONS_TABLE } from "./migrate.js";
import { SHIPPED_MIGRATIONS } from "./open.js";

export function schemaState(raw: RawDatabase, migrationsFolder = SHIPPED_MIGRATIONS): SchemaState {
  const shipped = readMigrationFiles({ migrationsFolder });
  const latestApplied = lastAppliedMigration(raw);
  const applied =
    latestApplied === null ? 0 : raw.all<{ n: number }>(`SELECT count(*) AS n FROM "${MIGRATIONS_TABLE}"`)[0]!.n;
  const latestShipped = shipped.at(-1)?.folderMillis ?? null;
  const pending = shipped.filter((m) => latestApplied === null || m.folderMillis > latestApplied).length;
  return {
    shipped: shipped.length,
    applied,
    latestShipped,
    latestApplied,
    pending,
    newer: latestApplied !== null && latestShipped !== null && latestApplied > latestShipped,
  };
}

export function quickCheck(raw: RawDatabase): Integrity {
  try {
    const rows = raw.all<{ quick_check: string }>("PRAGMA quick_check");
    const messages = rows.map((r) => r.quick_check);
    return { ok: messages.length === 1 && messages[0] === "ok", messages };
  } catch (error) {
    return { ok: false, messages: [error instanceof Error ? error.message : String(error)] };
  }
}

export function fileSize(path: string): { bytes: number; walBytes: number } {
  const size = (p: string) => {
    try {
      return statSync(p).size;
    } catch {
      return 0;
    }
  };
  return { bytes: size(path), walBytes: size(`${path}-wal`) };
}
