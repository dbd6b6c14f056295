// Retention on PostgreSQL: settled history deleted and counted, table by table, each table's statement under its own
// name (a name stands for one text only).
import type { HistoryTable } from "../../statements.js";
import { statement } from "../prepared.js";
import type { SomePg } from "./statement.js";

/** The key retention deletes by, table by table. */
const KEY: Record<HistoryTable, string> = {
  audit_events: "id",
  injections: "id",
  countdowns: "id",
  parks: "id",
  sessions: "session_id",
  continuation_bills: "injection_id",
  notices: "id",
  verifications: "id",
};

export const RETENTION = {
  /** Rows other transactions have locked are skipped rather than waited for (they are not history yet). */
  deleteHistory: {
    async run(c, table, settled, cutoff, limit) {
      const key = KEY[table];
      const text = `WITH gone AS (
        DELETE FROM ${table} WHERE ${key} IN (
          SELECT ${key} FROM ${table} WHERE ${settled.replace("?", "$1")} LIMIT $2 FOR UPDATE SKIP LOCKED)
        RETURNING 1)
      SELECT count(*)::int AS n FROM gone`;
      return Number((await c.rowsOf<{ n: number }>(statement(`prune_${table}`, text), [cutoff, limit]))[0]?.n ?? 0);
    },
  },

  countHistory: {
    async run(c, table, settled, cutoff) {
      const text = `SELECT count(*)::int AS n FROM ${table} WHERE ${settled.replace("?", "$1")}`;
      return Number((await c.rowsOf<{ n: number }>(statement(`count_${table}`, text), [cutoff]))[0]?.n ?? 0);
    },
  },
} satisfies SomePg;
