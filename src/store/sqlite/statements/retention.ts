// Retention on SQLite: settled history deleted and counted, table by table. Each call names its table and what is
// settled in it, so these run as built at each call: retention is upkeep, on no session's path.
import type { SomePrepared } from "./prepare.js";

export const RETENTION = {
  deleteHistory:
    ({ raw }) =>
    (table, settled, cutoff, limit) =>
      raw.run(
        `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${settled} LIMIT ?)`,
        cutoff,
        limit,
      ).changes,

  countHistory:
    ({ raw }) =>
    (table, settled, cutoff) =>
      raw.all<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${settled}`, cutoff)[0]?.n ?? 0,
} satisfies SomePrepared;
