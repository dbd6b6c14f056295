// Applies migrations-pg/ exactly as drizzle-kit and drizzle's migrators record them (`drizzle.__drizzle_migrations`,
// same hashes and timestamps, so each sees the others' work), but in one transaction under an advisory lock, and
// reading the last applied migration inside it: replicas starting together apply each migration once, where
// drizzle's own migrate() lets two of them run the same CREATE TABLE.
import { sql } from "drizzle-orm";
import { readMigrationFiles } from "drizzle-orm/migrator";
import type { MigrationReport } from "../operator/operator.js";
import type { PgDb } from "./connection.js";
import { rowsOf } from "./rows.js";

/** The advisory lock key of migrations ("tcmigr" in ASCII): no other lock of ours uses it. */
export const MIGRATION_LOCK_KEY = 0x74636d696772;

export async function lastAppliedPgMigration(db: PgDb): Promise<number | null> {
  const exists = rowsOf<{ found: boolean }>(
    await db.execute(sql`SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS found`),
  );
  if (!exists[0]?.found) return null;
  const rows = rowsOf<{ created_at: string | number }>(
    await db.execute(sql`SELECT created_at FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT 1`),
  );
  return rows[0] ? Number(rows[0].created_at) : null;
}

export async function applyPgMigrations(
  db: PgDb,
  transaction: <T>(work: (tx: PgDb) => Promise<T>) => Promise<T>,
  migrationsFolder: string,
): Promise<MigrationReport> {
  const migrations = readMigrationFiles({ migrationsFolder });
  const newest = migrations.at(-1)?.folderMillis ?? null;
  const before = await lastAppliedPgMigration(db);
  if (newest === null || (before !== null && before >= newest)) {
    return { applied: 0, latest: before, shipped: migrations.length };
  }
  const applied = await transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
    await tx.execute(sql`CREATE SCHEMA IF NOT EXISTS drizzle`);
    await tx.execute(
      sql`CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`,
    );
    const last = rowsOf<{ created_at: string | number }>(
      await tx.execute(sql`SELECT created_at FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT 1`),
    )[0];
    const lastAt = last ? Number(last.created_at) : null;
    let count = 0;
    for (const migration of migrations) {
      if (lastAt !== null && lastAt >= migration.folderMillis) continue;
      for (const statement of migration.sql) {
        if (statement.trim() !== "") await tx.execute(sql.raw(statement));
      }
      await tx.execute(
        sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${migration.hash}, ${migration.folderMillis})`,
      );
      count++;
    }
    return count;
  });
  return { applied, latest: newest, shipped: migrations.length };
}
