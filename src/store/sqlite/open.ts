// Opens the database file with the driver of the running runtime (bun:sqlite inside OpenCode, better-sqlite3 under
// Node), makes the file owner-only, sets the PRAGMAs both drivers need, and migrates under a write lock so that two
// processes opening a fresh file at once cannot both create the tables.
import { accessSync, chmodSync, closeSync, constants, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { applyMigrations } from "./migrate.js";
import { schema } from "../schema.js";
import { describeDatabaseFailure } from "../open/failure.js";
import { StoreOpenError } from "../open/open-error.js";
import { isBun } from "../open/runtime.js";
import { loadBetterSqlite, type BetterSqlite } from "./node-driver.js";

export { StoreOpenError };
import type { Db, DriverName, RawDatabase, SqliteConnection } from "./connection.js";

export type { Db, DriverName, RawDatabase, SqliteConnection } from "./connection.js";

export interface OpenOptions {
  /** Open without writing anything: no migration, no PRAGMA that writes (for the CLI on read-only files). */
  readonly?: boolean;
  busyTimeoutMs?: number;
  migrationsFolder?: string;
  /** Called with every statement executed (better-sqlite3 only): how benchmarks count SQL on the hot path. */
  onStatement?: (sql: string) => void;
}

export const SHIPPED_MIGRATIONS = fileURLToPath(new URL("../../../migrations", import.meta.url));

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function prepareFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // Creating the file ourselves gives it owner-only permissions from the first byte; SQLite gives its -wal and
  // -shm files the database file's permissions.
  if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
  try {
    // Owner-only, and never more than the owner allowed: a file its owner made read-only stays read-only (and the open
    // says so) rather than being made writable behind their back.
    chmodSync(path, statSync(path).mode & 0o700);
  } catch {
    // A file owned by someone else keeps its mode; opening it still works if we may read and write it.
  }
}

async function openRaw(
  path: string,
  readonly: boolean,
  onStatement?: (sql: string) => void,
): Promise<{ raw: RawDatabase; db: Db; driver: DriverName }> {
  if (isBun) {
    const { Database } = await import("bun:sqlite");
    const { drizzle } = await import("drizzle-orm/bun-sqlite");
    const client = readonly
      ? new Database(path, { readonly: true })
      : new Database(path, { create: true, readwrite: true });
    const transaction = client.transaction((work: () => unknown) => work());
    const raw: RawDatabase = {
      exec: (sql) => void client.exec(sql),
      immediate: <T>(work: () => T) => transaction.immediate(work) as T,
      all: <T>(sql: string, ...params: unknown[]) => client.query(sql).all(...(params as never[])) as T[],
      run: (sql, ...params) => ({ changes: client.query(sql).run(...(params as never[])).changes }),
      prepare: (sql) => {
        const statement = client.prepare(sql);
        return {
          run: (...params) => ({ changes: statement.run(...(params as never[])).changes }),
          all: <T>(...params: unknown[]) => statement.all(...(params as never[])) as T[],
        };
      },
      close: () => client.close(),
    };
    return { raw, db: drizzle(client, { schema }) as unknown as Db, driver: "bun:sqlite" };
  }
  let Driver: BetterSqlite;
  try {
    Driver = await loadBetterSqlite();
  } catch (error) {
    throw new StoreOpenError(path, errorText(error), error);
  }
  const { drizzle } = await import("drizzle-orm/better-sqlite3");
  const verbose = onStatement ? (sql: unknown) => onStatement(String(sql)) : undefined;
  const client = new Driver(path, readonly ? { readonly: true, fileMustExist: true, verbose } : { verbose });
  const transaction = client.transaction((work: () => unknown) => work());
  const raw: RawDatabase = {
    exec: (sql) => void client.exec(sql),
    immediate: <T>(work: () => T) => transaction.immediate(work) as T,
    all: <T>(sql: string, ...params: unknown[]) => client.prepare(sql).all(...params) as T[],
    run: (sql, ...params) => ({ changes: client.prepare(sql).run(...params).changes }),
    prepare: (sql) => {
      const statement = client.prepare(sql);
      return {
        run: (...params) => ({ changes: statement.run(...params).changes }),
        all: <T>(...params: unknown[]) => statement.all(...params) as T[],
      };
    },
    close: () => client.close(),
  };
  return { raw, db: drizzle(client, { schema }) as unknown as Db, driver: "better-sqlite3" };
}

export async function openSqlite(path: string, options: OpenOptions = {}): Promise<SqliteConnection> {
  const readonly = options.readonly ?? false;
  const file = path === ":memory:" ? path : resolve(path);
  if (file !== ":memory:") {
    if (readonly && !existsSync(file)) throw new StoreOpenError(file, "the file does not exist");
    try {
      if (!readonly) prepareFile(file);
    } catch (error) {
      throw new StoreOpenError(file, `cannot create the file or its folder: ${errorText(error)}`, error);
    }
    // SQLite opens a file it may not write read-only without a word, and a migrated file needs no write until the
    // first decision: without asking the file system first, the enforcer would start only to pause at that write.
    const problem = readonly ? undefined : explainAccess(file, readonly);
    if (problem) throw new StoreOpenError(file, problem);
  }
  let opened: Awaited<ReturnType<typeof openRaw>>;
  try {
    opened = await openRaw(file, readonly, options.onStatement);
  } catch (error) {
    if (error instanceof StoreOpenError) throw error;
    throw new StoreOpenError(file, explainAccess(file, readonly) ?? describeDatabaseFailure(error), error);
  }
  const { raw, db, driver } = opened;
  try {
    // Bun's default busy timeout is 0 and its foreign keys are off: set everything explicitly on both drivers.
    raw.exec(`PRAGMA busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5000)}`);
    if (!readonly) {
      if (file !== ":memory:") switchToWal(raw);
      raw.exec("PRAGMA synchronous = NORMAL");
    }
    raw.exec("PRAGMA foreign_keys = ON");
    // Reading the header here turns a file that is not a database into an open error, also for read-only opens.
    raw.all("PRAGMA schema_version");
    const migration = readonly
      ? { applied: 0, latest: null, shipped: 0 }
      : applyMigrations(raw, options.migrationsFolder ?? SHIPPED_MIGRATIONS);
    return { db, raw, path: file, driver, migration, close: () => raw.close() };
  } catch (error) {
    try {
      raw.close();
    } catch {
      // Already unusable: the original error is the one worth reporting.
    }
    throw new StoreOpenError(
      file,
      (!readonly && explainAccess(file, readonly)) || describeDatabaseFailure(error),
      error,
    );
  }
}

/** SQLite says "unable to open database file" for several causes: name the one the file system shows. */
function explainAccess(file: string, readonly: boolean): string | undefined {
  if (file === ":memory:") return undefined;
  const check = (path: string, mode: number) => {
    try {
      accessSync(path, mode);
      return undefined;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code;
    }
  };
  const folder = dirname(file);
  if (!readonly) {
    const fileProblem = existsSync(file) ? check(file, constants.R_OK | constants.W_OK) : undefined;
    // WAL needs the folder too: SQLite creates the -wal and -shm files beside the database.
    const folderProblem = check(folder, constants.W_OK);
    if (fileProblem === "EROFS" || folderProblem === "EROFS")
      return "the file or its folder is read-only (a read-only file system)";
    if (fileProblem) return `the file is read-only or not accessible to this user (${fileProblem})`;
    if (folderProblem) return `its folder ${folder} is read-only or not accessible to this user (${folderProblem})`;
  }
  return undefined;
}

/** The switch needs a moment without other connections; several processes opening a fresh file can collide. */
function switchToWal(raw: RawDatabase): void {
  let mode: string | undefined;
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      mode = raw.all<{ journal_mode: string }>("PRAGMA journal_mode = WAL")[0]?.journal_mode;
    } catch (error) {
      if (!/locked|busy/i.test(errorText(error)) || attempt === 19) throw error;
    }
    if (mode === "wal") return;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25 * (attempt + 1));
  }
  throw new Error(`could not switch to WAL (journal_mode is ${mode})`);
}
