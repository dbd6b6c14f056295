// How one of the store's named statements runs on either driver: prepared once per connection under node-postgres,
// its parameters bound into drizzle SQL under Bun's client (which prepares what it runs by itself).
import { sql, type SQL } from "drizzle-orm";
import { isBun } from "../open/runtime.js";
import type { PgDb } from "./connection.js";
import { rowsOf } from "./rows.js";

export interface Statement {
  name: string;
  text: string;
}

interface NodePgQueryable {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/** `text` (placeholders $1, $2…) with `values` bound, as drizzle SQL: how Bun's client runs it. */
function bound(text: string, values: readonly unknown[]): SQL {
  const query = sql.empty();
  const parts = text.split(/\$(\d+)/);
  for (let i = 0; i < parts.length; i++) {
    if (i % 2 === 0) query.append(sql.raw(parts[i]!));
    else query.append(sql`${values[Number(parts[i]) - 1]}`);
  }
  return query;
}

/**
 * A statement's rows. Under node-postgres it runs as the named statement (a name stands for one text only); Bun's
 * client prepares what it runs by itself.
 */
export async function exec<T>(db: PgDb, statement: Statement, values: readonly unknown[]): Promise<T[]> {
  if (isBun) return rowsOf<T>(await db.execute(bound(statement.text, values)));
  const client = (db as unknown as { $client: NodePgQueryable }).$client;
  return (await client.query({ ...statement, values: values as unknown[] })).rows as T[];
}

export const statement = (name: string, text: string): Statement => ({ name: `tc_${name}`, text });
