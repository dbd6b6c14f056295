// Opening the database for a command: read-only for the commands that only look, read-write (and migrated) for the
// ones that change something; a file path or a postgres:// URL alike. Every failure becomes one clear line.
import { existsSync } from "node:fs";
import { configuredDatabasePath } from "../store/default-path.js";
import { isPostgresUrl, type OperatorStore } from "../store/open-engine-store.js";
import { openEngineStore } from "../store/open-engine-store.js";
import { describePgFailure, openPg, PgOpenError, redactUrl } from "../store/pg/open.js";
import { PgStore } from "../store/pg/pg-store.js";
import { pgProblemOf } from "../store/pg/problems.js";
import { openStore, StoreOpenError } from "../store/sqlite/open.js";
import { SqliteStore } from "../store/sqlite/sqlite-store.js";
import { CliError } from "./errors.js";

export function databasePath(option: string | undefined): string {
  return option && option.trim() !== "" ? option : configuredDatabasePath();
}

/** The database as a message may name it: a file path, or a URL without its password. */
export function shownLocation(location: string): string {
  return isPostgresUrl(location) ? redactUrl(location) : location;
}

export async function openForReading(location: string): Promise<OperatorStore> {
  if (isPostgresUrl(location)) {
    try {
      return new PgStore(await openPg(location, { readonly: true, statementTimeoutMs: 10_000 }), { kind: "cli" });
    } catch (error) {
      throw cliErrorOf(error);
    }
  }
  if (!existsSync(location))
    throw new CliError(
      `no database at ${location} (the plugin creates it on its first event; set --db or TODO_CONTINUATION_DB to look elsewhere)`,
    );
  try {
    return new SqliteStore(await openStore(location, { readonly: true }));
  } catch (error) {
    throw cliErrorOf(error);
  }
}

export async function openForWriting(
  location: string,
  busyTimeoutMs?: number,
  kind: "cli" | "service" | "fleet" = "cli",
  poolSize?: number,
): Promise<OperatorStore> {
  try {
    return await openEngineStore(location, { busyTimeoutMs, kind, poolSize });
  } catch (error) {
    throw cliErrorOf(error);
  }
}

/** Runs a query; a missing view or table means the database predates this version. */
export async function query<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw cliErrorOf(error);
  }
}

/** A state change through the store port, with its failure said the same way as a query's. */
export const change = query;

function cliErrorOf(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof StoreOpenError || error instanceof PgOpenError) return new CliError(error.message);
  const text = (error as Error).message;
  if (/no such (table|view|column)|relation .* does not exist/i.test(text))
    return new CliError(
      `the database schema is older than this version of todo-continuation (${text}); run \`todo-continuation migrate\``,
    );
  if (/not a database|malformed/i.test(text)) return new CliError(`the database file is damaged: ${text}`);
  if (pgProblemOf(error)) return new CliError(`the database server failed: ${describePgFailure(error)}`);
  return new CliError(text);
}
