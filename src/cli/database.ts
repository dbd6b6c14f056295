// Opening the database for a command: read-only for the commands that only look, read-write (and migrated) for the
// ones that change something; a file path or a postgres:// URL alike. Every failure becomes one clear line.
import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";
import { isFileSource, resolveConfiguration } from "../config/resolve.js";
import { defaultDatabasePath } from "../store/open/default-path.js";
import { isPostgresUrl, LocationError, redactUrl, resolveLocation } from "../store/open/location.js";
import type { OperatorStore } from "../store/operator/operator.js";
import { sessionSeen } from "../store/operator/queries.js";
import { openStore, type OpenStoreOptions } from "../store/open/open.js";
import { StoreOpenError } from "../store/open/open-error.js";
import { describeDatabaseFailure } from "../store/open/failure.js";
import { pgProblemOf } from "../store/pg/problems.js";
import { CliError, UsageError } from "./errors.js";

/**
 * The database a command works on: --db, else $TODO_CONTINUATION_DB, else the databasePath of the configuration files
 * the plugin reads in the current directory (the project's, then the user's), else the default file; `~` is the home
 * folder and a relative path is the current directory's. A location that names nothing usable is a usage error.
 */
export function databasePath(option: string | undefined): string {
  if (option !== undefined && option.trim() === "")
    throw new UsageError("--db is empty: give a file path or a postgres:// URL (or leave --db out for the default)");
  const fromEnv = process.env.TODO_CONTINUATION_DB;
  const [source, given] =
    option !== undefined
      ? ["--db", option]
      : fromEnv && fromEnv.trim() !== ""
        ? ["TODO_CONTINUATION_DB", fromEnv]
        : fileDatabasePath();
  try {
    return resolveLocation(given, { directory: process.cwd() });
  } catch (error) {
    if (error instanceof LocationError) throw new UsageError(`${source}: ${error.message}`);
    throw error;
  }
}

/** The databasePath a configuration file gives, with the file's path as its source; else the default location. */
function fileDatabasePath(): [string, string] {
  const { sources, merged } = resolveConfiguration({ env: { ...process.env, TODO_CONTINUATION_DB: "" }, files: true });
  const source = sources.databasePath;
  return isFileSource(source)
    ? [`databasePath in ${source}`, merged.databasePath]
    : ["the default location", defaultDatabasePath()];
}

/** The database as a message may name it: a file path, or a URL without its password. */
export function shownLocation(location: string): string {
  return isPostgresUrl(location) ? redactUrl(location) : location;
}

/** What a command says of a session id the database has no row of, anywhere: most likely a typo. */
export function neverSeen(db: string | undefined, sessionId: string): string {
  return (
    `no session ${sessionId} in ${shownLocation(databasePath(db))}: nothing was ever recorded for it. ` +
    "`todo-continuation status` lists the sessions held now (`history` and `audit` the ones seen before)"
  );
}

/** A command's answer when it found no row: `nothing`, or `neverSeen` for a session the database never saw. */
export async function nothingFound(
  store: OperatorStore,
  db: string | undefined,
  session: string | undefined,
  nothing: string,
): Promise<string> {
  if (session !== undefined && !(await query(() => sessionSeen(store.reader, session)))) return neverSeen(db, session);
  return nothing;
}

/**
 * What stands between this process and a database file, said plainly before SQLite would say "disk I/O error" or
 * "unable to open database file": a folder where the file should be, a path this user may not follow or read.
 * `missing` when there is no file there (and nothing else is wrong).
 */
function fileProblem(location: string): string | "missing" | undefined {
  try {
    if (statSync(location).isDirectory())
      return `${location} is a folder, not a database file: name the file (e.g. --db ${join(location, "todo-continuation.db")})`;
    accessSync(location, constants.R_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return "missing";
    if (code === "EACCES" || code === "EPERM")
      return `this user (${process.getuid?.() ?? "?"}) may not read ${location}: permission denied on the file or a folder on its way`;
    if (code === "ENOTDIR") return `${location} is not a path to a file: a part of it is a file, not a folder`;
    return `cannot look at ${location}: ${(error as Error).message}`;
  }
}

export async function openForReading(location: string): Promise<OperatorStore> {
  if (!isPostgresUrl(location)) {
    const problem = fileProblem(location);
    if (problem === "missing")
      throw new CliError(
        `no database at ${location}: no plugin has written it yet (\`todo-continuation doctor\` says whether the plugin runs, and where its database is; --db or TODO_CONTINUATION_DB look elsewhere)`,
      );
    if (problem) throw new CliError(problem);
  }
  return opened(location, { readonly: true, kind: "cli" });
}

export function openForWriting(location: string, options: OpenStoreOptions = {}): Promise<OperatorStore> {
  if (!isPostgresUrl(location)) {
    const problem = fileProblem(location);
    if (problem && problem !== "missing") throw new CliError(problem);
  }
  return opened(location, { kind: "cli", ...options });
}

/** Fails with the driver's own message when better-sqlite3 cannot be used (a command that opens no file yet). */
export async function requireSqliteDriver(): Promise<void> {
  const { loadBetterSqlite } = await import("../store/sqlite/node-driver.js");
  try {
    await loadBetterSqlite();
  } catch (error) {
    throw new CliError((error as Error).message);
  }
}

async function opened(location: string, options: OpenStoreOptions): Promise<OperatorStore> {
  try {
    return await openStore(location, options);
  } catch (error) {
    throw cliErrorOf(error);
  }
}

/** Runs a query or a state change; a missing view or table means the database predates this version. */
export async function query<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    // A usage error found while looking (an unknown session) keeps its exit code.
    if (error instanceof UsageError) throw error;
    throw cliErrorOf(error);
  }
}

/** Opens the database for writing, runs `work`, and closes it; failures said in one line. */
export async function withStore<T>(db: string | undefined, work: (store: OperatorStore) => Promise<T>): Promise<T> {
  const store = await openForWriting(databasePath(db));
  try {
    return await query(() => work(store));
  } finally {
    await store.close();
  }
}

function cliErrorOf(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof StoreOpenError) return new CliError(error.message);
  const text = describeDatabaseFailure(error);
  if (/no such (table|view|column)|relation .* does not exist/i.test(text))
    return new CliError(
      `the database schema is older than this version of todo-continuation (${text}); run \`todo-continuation migrate\``,
    );
  if (pgProblemOf(error)) return new CliError(`the database server failed: ${text}`);
  return new CliError(text);
}
