// Applies migrations/ exactly as drizzle-kit and drizzle's migrators do (same files, same `__drizzle_migrations`
// rows, so each sees the others' work), but under BEGIN IMMEDIATE and re-reading the last applied migration inside
// the lock: two processes racing on a fresh file serialize instead of both running CREATE TABLE.
import { readMigrationFiles } from "drizzle-orm/migrator";
import type { MigrationReport, RawDatabase } from "./connection.js";

export type { MigrationReport } from "./connection.js";

export const MIGRATIONS_TABLE = "__drizzle_migrations";

export function lastAppliedMigration(raw: RawDatabase): number | null {
  const exists = raw.all(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '${MIGRATIONS_TABLE}'`);
  if (exists.length === 0) return null;
  const row = raw.all<{ created_at: number | string }>(
    `SELECT created_at FROM "${MIGRATIONS_TABLE}" ORDER BY created_at DESC LIMIT 1`,
  )[0];
  return row ? Number(row.created_at) : null;
}

export function applyMigrations(raw: RawDatabase, migrationsFolder: string): MigrationReport {
  const migrations = readMigrationFiles({ migrationsFolder });
  const newest = migrations.at(-1)?.folderMillis ?? null;
  const before = lastAppliedMigration(raw);
  if (newest === null || (before !== null && before >= newest)) {
    return { applied: 0, latest: before, shipped: migrations.length };
  }
  raw.exec("BEGIN IMMEDIATE");
  try {
    raw.exec(
      `CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`,
    );
    const last = lastAppliedMigration(raw);
    let applied = 0;
    for (const migration of migrations) {
      if (last !== null && last >= migration.folderMillis) continue;
      for (const statement of migration.sql) {
        if (statement.trim() !== "") raw.exec(statement);
      }
      raw.run(
        `INSERT INTO "${MIGRATIONS_TABLE}" ("hash", "created_at") VALUES (?, ?)`,
        migration.hash,
        migration.folderMillis,
      );
      applied++;
    }
    raw.exec("COMMIT");
    return { applied, latest: newest, shipped: migrations.length };
  } catch (error) {
    raw.exec("ROLLBACK");
    throw error;
  }
}
