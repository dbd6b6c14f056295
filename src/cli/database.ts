// Opening the database for a command: read-only for the commands that only look, read-write (and migrated) for the
// ones that change something. Every failure becomes one clear line.
import { existsSync } from "node:fs";
import { configuredDatabasePath } from "../store/default-path.js";
import { openStore, StoreOpenError, type Store } from "../store/sqlite/open.js";
import { CliError } from "./errors.js";

export function databasePath(option: string | undefined): string {
  return option && option.trim() !== "" ? option : configuredDatabasePath();
}

export async function openForReading(path: string): Promise<Store> {
  if (!existsSync(path))
    throw new CliError(
      `no database at ${path} (the plugin creates it on its first event; set --db or TODO_CONTINUATION_DB to look elsewhere)`,
    );
  return open(path, true);
}

export async function openForWriting(path: string, busyTimeoutMs?: number): Promise<Store> {
  return open(path, false, busyTimeoutMs);
}

async function open(path: string, readonly: boolean, busyTimeoutMs?: number): Promise<Store> {
  try {
    return await openStore(path, { readonly, busyTimeoutMs });
  } catch (error) {
    throw new CliError(
      error instanceof StoreOpenError ? error.message : `cannot open ${path}: ${(error as Error).message}`,
    );
  }
}

/** Runs a query; a missing view or table means the file predates this version. */
export function query<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw cliErrorOf(error);
  }
}

/** A state change through the store port, with its failure said the same way as a query's. */
export async function change<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw cliErrorOf(error);
  }
}

function cliErrorOf(error: unknown): CliError {
  const text = (error as Error).message;
  if (/no such (table|view|column)/i.test(text))
    return new CliError(
      `the database schema is older than this version of todo-continuation (${text}); run \`todo-continuation migrate\``,
    );
  if (/not a database|malformed/i.test(text)) return new CliError(`the database file is damaged: ${text}`);
  return new CliError(text);
}
