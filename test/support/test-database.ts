// Where an engine test keeps its data: a SQLite file in the test's folder, or (with TC_TEST_STORE=postgres) a database
// of its own on the run's PostgreSQL server, named in the folder so that a second engine on the same folder (a
// restart) finds the same data. Tests read rows synchronously, as they always have: on PostgreSQL through a client
// kept on a worker thread (sync-query.ts).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";
import type { OperatorStore } from "../../src/store/operator/operator.js";
import { openStore } from "../../src/store/open/open.js";
import type { SqliteConnection } from "../../src/store/sqlite/open.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { querySync } from "./sync-query.js";
import { turn } from "./wait-for.js";

export type TestBackend = "sqlite" | "postgres";

export const TEST_BACKEND: TestBackend = process.env.TC_TEST_STORE === "postgres" ? "postgres" : "sqlite";

/** Synchronous reads and writes of test rows, `?` placeholders on both backends. */
export interface TestRows {
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): T[];
  run(sql: string, ...params: unknown[]): void;
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  return `'${String(value).replace(/'/g, "''")}'`;
}

function inline(sql: string, params: unknown[]): string {
  let i = 0;
  return sql.replace(/\?/g, () => literal(params[i++]));
}

/** SQLite's implicit insertion order, spelled for PostgreSQL: the id of the row's first audit event. */
function portable(sql: string): string {
  return sql
    .replace(
      /ORDER BY armed_at, rowid/g,
      "ORDER BY armed_at, (SELECT min(a.id) FROM audit_events a WHERE a.detail LIKE '{\"countdownId\":\"' || countdowns.id || '\"%')",
    )
    .replace(
      /ORDER BY created_at, rowid/g,
      "ORDER BY created_at, (SELECT min(a.id) FROM audit_events a WHERE a.event = 'fired' AND a.detail LIKE '%\"injectionId\":\"' || injections.id || '\"%')",
    );
}

/** Rows of a PostgreSQL database, typed as JSON types them (numbers, not bigint strings), like the SQLite rows. */
export function pgRows(url: string): TestRows {
  return {
    all<T>(sql: string, ...params: unknown[]): T[] {
      const query = portable(inline(sql, params));
      const [row] = querySync<{ rows: T[] }>(url, `SELECT coalesce(json_agg(t), '[]'::json) AS rows FROM (${query}) t`);
      return row!.rows;
    },
    run(sql: string, ...params: unknown[]): void {
      querySync(url, inline(sql, params));
    },
  };
}

export function sqliteRows(store: SqliteConnection): TestRows {
  return {
    all: <T>(sql: string, ...params: unknown[]) => store.raw.all<T>(sql, ...params),
    run: (sql: string, ...params: unknown[]) => void store.raw.run(sql, ...params),
  };
}

/** The database of a test folder: its file, or the PostgreSQL database created for it on first use. */
export function databaseOf(folder: string, backend: TestBackend = TEST_BACKEND): string {
  if (backend === "sqlite") return join(folder, "state.db");
  const marker = join(folder, "pg-url");
  if (existsSync(marker)) return readFileSync(marker, "utf8").trim();
  const name = `eng_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  querySync(`postgres://postgres@127.0.0.1:${inject("pgPort")}/postgres`, `CREATE DATABASE ${name}`);
  const url = `postgres://postgres@127.0.0.1:${inject("pgPort")}/${name}`;
  writeFileSync(marker, url);
  return url;
}

export interface OpenedTestStore {
  location: string;
  store: OperatorStore;
  /** Resolves once no call to the store is waiting for the database (and none followed within an event-loop turn). */
  quiet(): Promise<void>;
  rows: TestRows;
  /** The SQLite connection, for the tests that look at the file itself. */
  file: SqliteConnection | undefined;
}

export async function openTestDatabase(
  folder: string,
  busyTimeoutMs?: number,
  backend: TestBackend = TEST_BACKEND,
): Promise<OpenedTestStore> {
  const location = databaseOf(folder, backend);
  // Engine tests jump a fake clock by minutes while a query is in flight: the client's own timers would fire.
  const opened = await openStore(location, { busyTimeoutMs, clientTimeoutMs: 0 });
  const file = opened instanceof SqliteStore ? opened.connection : undefined;
  const { store, quiet } = counted(opened);
  return { location, store, quiet, rows: file ? sqliteRows(file) : pgRows(location), file };
}

/** The store with every promise it hands out counted, so that a test can wait for the database to have answered. */
function counted(store: OperatorStore): { store: OperatorStore; quiet(): Promise<void> } {
  const pending = new Set<Promise<unknown>>();
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (result instanceof Promise) {
          const tracked = result.catch(() => undefined);
          pending.add(tracked);
          void tracked.finally(() => pending.delete(tracked));
        }
        return result;
      };
    },
  });
  return {
    store: proxy,
    async quiet() {
      // A store call often follows another after a few turns (a host read, a queue): quiet is a few turns without one.
      for (let calm = 0; calm < 5;) {
        await turn();
        if (pending.size === 0) calm++;
        else {
          calm = 0;
          await Promise.allSettled([...pending]);
        }
      }
    },
  };
}
