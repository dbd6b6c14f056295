// The SQLite schema (src/store/schema.ts) and the PostgreSQL one (src/store/pg/schema.ts) describe one database: every
// shared table has the same columns (name, nullability, default, primary key), checks and indexes (columns, unique,
// the partial index of armed countdowns) on both, checked on the declarations and on databases migrated from them.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getTableConfig as pgTableConfig, PgDialect, type PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteTableConfig, SQLiteSyncDialect, type SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import * as sqliteSchema from "../../src/store/schema.js";
import * as pgSchemaModule from "../../src/store/pg/schema.js";
import { openStore } from "../../src/store/open/open.js";
import { openSqlite } from "../../src/store/sqlite/open.js";
import { freshDatabase, pgQuery } from "../support/pg-database.js";

const SHARED = [
  "sessions",
  "countdowns",
  "parks",
  "injections",
  "auditEvents",
  "replicas",
  "continuationBills",
] as const;
/** Tables only a fleet needs: the servers several hosts' replicas share. */
const PG_ONLY = ["servers"];
/** Columns only hosts with clocks of their own need: when a row was written, by the database's clock. */
const PG_ONLY_COLUMNS = ["db_created_at", "db_at", "db_recorded_at"];

/** The SQL of a `where`/`check` without dialect quoting: the same text on both sides. */
function sqlText(chunk: unknown, dialect: { sqlToQuery(sql: never): { sql: string } }): string | null {
  if (!chunk) return null;
  return dialect
    .sqlToQuery(chunk as never)
    .sql.replace(/["`]/g, "")
    .replace(/\b\w+\.(\w+)\b/g, "$1")
    .replace(/\s+/g, " ")
    .trim();
}

function describeSqlite(table: SQLiteTable) {
  const config = sqliteTableConfig(table);
  const dialect = new SQLiteSyncDialect();
  return {
    name: config.name,
    columns: config.columns.map((c) => ({
      name: c.name,
      notNull: c.notNull,
      primary: c.primary,
      default: c.hasDefault ? (c.default ?? null) : undefined,
    })),
    indexes: config.indexes
      .map((i) => ({
        name: i.config.name,
        unique: i.config.unique,
        columns: i.config.columns.map((c) => (c as { name: string }).name),
        where: sqlText(i.config.where, dialect),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    checks: config.checks.map((c) => ({ name: c.name, sql: sqlText(c.value, dialect) })),
  };
}

function describePg(table: PgTable) {
  const config = pgTableConfig(table);
  const dialect = new PgDialect();
  return {
    name: config.name,
    columns: config.columns.map((c) => ({
      name: c.name,
      // A serial key is NOT NULL by construction; SQLite's INTEGER PRIMARY KEY is too.
      notNull: c.notNull || c.primary,
      primary: c.primary,
      default: c.hasDefault && c.columnType !== "PgBigSerial64" ? (c.default ?? null) : undefined,
    })),
    indexes: config.indexes
      .map((i) => ({
        name: i.config.name!,
        unique: i.config.unique,
        columns: i.config.columns.map((c) => (c as { name: string }).name),
        where: sqlText(i.config.where, dialect),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    checks: config.checks.map((c) => ({ name: c.name, sql: sqlText(c.value, dialect) })),
  };
}

describe("the SQLite and PostgreSQL schemas", () => {
  it.each(SHARED)("declare %s alike: columns, nullability, defaults, keys, indexes, checks", (key) => {
    const sqlite = describeSqlite(sqliteSchema[key] as SQLiteTable);
    const pg = describePg(pgSchemaModule[key] as PgTable);
    pg.columns = pg.columns.filter((c) => !PG_ONLY_COLUMNS.includes(c.name));
    // SQLite's autoincrement key is NOT NULL implicitly; declare both the same way for the comparison.
    sqlite.columns = sqlite.columns.map((c) => ({ ...c, notNull: c.notNull || c.primary }));
    expect(pg).toEqual(sqlite);
  });

  it("store every time as a 64-bit integer on PostgreSQL (a 32-bit integer cannot hold epoch milliseconds)", () => {
    for (const key of SHARED) {
      const sqlite = sqliteTableConfig(sqliteSchema[key] as SQLiteTable);
      const pg = pgTableConfig(pgSchemaModule[key] as PgTable);
      for (const column of pg.columns) {
        const twin = sqlite.columns.find((c) => c.name === column.name);
        if (/(_at|_until|_ms)$/.test(column.name) || column.name === "at")
          expect([column.name, column.getSQLType()]).toEqual([column.name, "bigint"]);
        if (twin?.getSQLType() === "text") expect([column.name, column.getSQLType()]).toEqual([column.name, "text"]);
      }
    }
  });

  it("differ in nothing else: the same tables, plus the fleet's own on PostgreSQL", () => {
    const tablesOf = (module: Record<string, unknown>, config: (t: never) => { name: string }) =>
      Object.values(module)
        .filter((v) => v && typeof v === "object" && Symbol.for("drizzle:IsDrizzleTable") in (v as object))
        .map((t) => config(t as never).name)
        .sort();
    const sqliteTables = tablesOf(sqliteSchema, sqliteTableConfig as never);
    const pgTables = tablesOf(pgSchemaModule, pgTableConfig as never);
    expect(pgTables.filter((t) => !PG_ONLY.includes(t))).toEqual(sqliteTables);
  });

  it("produce the same indexes, partial armed index included, in migrated databases", async () => {
    const folder = mkdtempSync(join(tmpdir(), "tc-schemas-"));
    try {
      const file = await openSqlite(join(folder, "state.db"));
      const sqliteIndexes = file.raw
        .all<{ name: string; sql: string }>(
          "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name",
        )
        .map((r) => ({ name: r.name, unique: /UNIQUE/i.test(r.sql), where: /WHERE (.*)$/i.exec(r.sql)?.[1] ?? null }));
      const views = file.raw.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name");
      file.close();
      const url = await freshDatabase("schemas");
      const store = await openStore(url);
      await store.close();
      const pgIndexes = (
        await pgQuery<{ name: string; def: string }>(
          url,
          `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = 'public'
             AND indexname NOT LIKE '%_pkey' ORDER BY indexname`,
        )
      ).map((r) => ({
        name: r.name,
        unique: /UNIQUE/i.test(r.def),
        where: /WHERE \((.*)\)$/i.exec(r.def)?.[1]?.replace(/'(\w+)'::text/g, "'$1'") ?? null,
      }));
      expect(pgIndexes.map((i) => ({ ...i, where: i.where?.replace(/[()]/g, "") ?? null }))).toEqual(
        sqliteIndexes.map((i) => ({ ...i, where: i.where?.replace(/[()"]/g, "") ?? null })),
      );
      expect(pgIndexes.find((i) => i.name === "countdowns_one_armed_per_session")).toMatchObject({ unique: true });
      const pgViews = await pgQuery<{ name: string }>(
        url,
        "SELECT table_name AS name FROM information_schema.views WHERE table_schema = 'public' ORDER BY table_name",
      );
      expect(pgViews).toEqual(views);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
