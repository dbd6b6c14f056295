import { sql, type SQL } from "drizzle-orm";

// node-postgres answers `db.execute()` with `{ rows }`, bun-sql with an array: every raw query reads rows through here.
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

/** The database's clock in epoch milliseconds: leases across hosts are judged by it, never by a host's clock. */
export const DB_NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/**
 * Raised for an answer with a row missing what no row can lack. Bun's SQL client (1.3.14), when the server ends a
 * connection while a query's rows arrive, may resolve the query with rows of nulls and empty strings instead of
 * failing it (measured here: 3 in a million reads under connection kills; node-postgres fails such a query). A row
 * like that once sent a continuation to session "" and claimed a countdown without its session's lock.
 */
export class IncompleteAnswerError extends Error {
  constructor(what: string) {
    super(`the database's answer was incomplete (${what} without a value: a connection ended while it was read)`);
    this.name = "IncompleteAnswerError";
  }
}

/** `rows`, each checked to have every `required` field set (and, for text, not empty); else the read failed. */
export function whole<T extends object>(rows: T[], required: ReadonlyArray<keyof T & string>): T[] {
  for (const row of rows)
    for (const key of required) {
      const value = (row as Record<string, unknown>)[key];
      if (value === null || value === undefined || value === "") throw new IncompleteAnswerError(key);
    }
  return rows;
}

/** `text` with each `?` bound to the next parameter, as drizzle SQL (the operators' queries, written for both). */
export function bindPlaceholders(text: string, params: unknown[]): SQL {
  const parts = text.split("?");
  if (parts.length - 1 !== params.length)
    throw new Error(`query has ${parts.length - 1} placeholders for ${params.length} parameters`);
  let query = sql.raw(parts[0]!);
  params.forEach((value, i) => {
    query = sql`${query}${value}${sql.raw(parts[i + 1]!)}`;
  });
  return query;
}
