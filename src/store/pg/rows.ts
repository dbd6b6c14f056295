// node-postgres answers `db.execute()` with `{ rows }`, bun-sql with an array: every raw query reads rows through here.
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

/** The database's clock in epoch milliseconds: leases across hosts are judged by it, never by a host's clock. */
export const DB_NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
