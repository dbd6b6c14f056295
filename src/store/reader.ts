// Raw SQL for what operators read (the CLI, the TUI panel): the same query text on both backends, written with `?`
// placeholders and in the SQL both dialects share; the PostgreSQL reader numbers the placeholders ($1, $2…).
import { sql, type SQL } from "drizzle-orm";
import type { PgConnection } from "./pg/open.js";
import type { RawDatabase } from "./sqlite/open.js";

export interface SqlReader {
  readonly dialect: "sqlite" | "postgresql";
  all<T = Record<string, unknown>>(text: string, ...params: unknown[]): Promise<T[]>;
}

export function sqliteReader(raw: RawDatabase): SqlReader {
  return {
    dialect: "sqlite",
    all: async <T>(text: string, ...params: unknown[]) => raw.all<T>(text, ...params),
  };
}

/** `text` with each `?` bound to the next parameter, as drizzle SQL. */
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

export function pgReader(connection: Pick<PgConnection, "rows">): SqlReader {
  return {
    dialect: "postgresql",
    all: <T>(text: string, ...params: unknown[]) => connection.rows<T>(bindPlaceholders(text, params)),
  };
}
