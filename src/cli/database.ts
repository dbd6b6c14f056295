// Opening the database for a command: read-only for the commands that only look, read-write (and migrated) for the
// ones that change something; a file path or a postgres:// URL alike. Every failure becomes one clear line.
import { existsSync } from "node:fs";
import { defaultDatabasePath } from "../store/default-path.js";
import { isPostgresUrl, LocationError, redactUrl, resolveLocation } from "../store/location.js";
import type { OperatorStore } from "../store/operator.js";
import { openStore, type OpenStoreOptions } from "../store/open.js";
import { StoreOpenError } from "../store/open-error.js";
import { describeDatabaseFailure } from "../store/failure.js";
import { pgProblemOf } from "../store/pg/problems.js";
import { CliError, UsageError } from "./errors.js";

/**
 * The database a command works on: --db, else $TODO_CONTINUATION_DB, else the default file; `~` is the home folder and
 * a relative path is the current directory's. A location that names nothing usable is a usage error.
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
        : ["the default location", defaultDatabasePath()];
  try {
    return resolveLocation(given, { directory: process.cwd() });
  } catch (error) {
    if (error instanceof LocationError) throw new UsageError(`${source}: ${error.message}`);
    throw error;
  }
}

/** The database as a message may name it: a file path, or a URL without its password. */
export function shownLocation(location: string): string {
  return isPostgresUrl(location) ? redactUrl(location) : location;
}

export async function openForReading(location: string): Promise<OperatorStore> {
  if (!isPostgresUrl(location) && !existsSync(location))
    throw new CliError(
      `no database at ${location} (the plugin creates it on its first event; set --db or TODO_CONTINUATION_DB to look elsewhere)`,
    );
  return opened(location, { readonly: true, kind: "cli" });
}

export function openForWriting(location: string, options: OpenStoreOptions = {}): Promise<OperatorStore> {
  return opened(location, { kind: "cli", ...options });
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
