// An open SQLite file, whichever driver opened it (open.ts): drizzle over it, the few raw calls the store needs beyond
// drizzle, and what migrating it at open did.
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import type { Schema } from "../schema.js";

export type Db = BaseSQLiteDatabase<"sync", unknown, Schema>;

/** The few raw calls the store needs beyond drizzle: PRAGMAs, migrations and diagnostics. */
export interface RawDatabase {
  exec(sql: string): void;
  /** Runs `work` in one BEGIN IMMEDIATE transaction (the wrapper is built once per connection, not per call). */
  immediate<T>(work: () => T): T;
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): T[];
  run(sql: string, ...params: unknown[]): { changes: number };
  /** A statement prepared once, for the store's statements written in SQL rather than with drizzle. */
  prepare(sql: string): RawStatement;
  close(): void;
}

export interface RawStatement {
  run(...params: unknown[]): { changes: number };
  all<T = Record<string, unknown>>(...params: unknown[]): T[];
}

export type DriverName = "better-sqlite3" | "bun:sqlite";

export interface MigrationReport {
  applied: number;
  /** `created_at` (the migration's folder timestamp) of the newest migration in the file after opening. */
  latest: number | null;
  shipped: number;
}

export interface SqliteConnection {
  db: Db;
  raw: RawDatabase;
  path: string;
  driver: DriverName;
  migration: MigrationReport;
  close(): void;
}
