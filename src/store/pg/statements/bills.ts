// What continuations cost, on PostgreSQL: their bills, the spend the budgets read, and the continuations still
// unbilled. "Today" is the database's clock's (UTC), so that a fleet's replicas share one day; rows from before
// db_recorded_at have only their writer's time.
import { getTableColumns } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { NewBill } from "../../schema.js";
import { whole } from "../rows.js";
import { continuationBills } from "../schema.js";
import { scoped, type SomePg } from "./statement.js";

/** The columns a bill names, in the order insertBill binds them (the database stamps its own clock's). */
const BILL_KEYS = Object.keys(getTableColumns(continuationBills)).filter((k) => k !== "dbRecordedAt") as Array<
  keyof NewBill
>;
const BILL_COLUMNS = BILL_KEYS.map(
  (key) => (getTableColumns(continuationBills) as Record<string, PgColumn>)[key]!.name,
);
const TODAY = `recorded_at >= $1::bigint - 86400000
  AND coalesce(db_recorded_at, recorded_at) >= extract(epoch from date_trunc('day', now() AT TIME ZONE 'UTC')) * 1000`;

const asNumbers = (rows: Array<{ cost: number; tokens: number }>) =>
  rows.map((r) => ({ cost: Number(r.cost), tokens: Number(r.tokens) }));

export const BILLS = {
  insertBill: {
    sql: `INSERT INTO continuation_bills (${BILL_COLUMNS.join(", ")})
      VALUES (${BILL_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")}) ON CONFLICT DO NOTHING
      RETURNING injection_id AS "id"`,
    async run(c, bill) {
      const written = await c.rows<{ id: string }>(BILL_KEYS.map((k) => bill[k] ?? null));
      return whole(written, ["id"]).length > 0;
    },
  },

  spentSince: {
    sql: `SELECT coalesce(sum(cost), 0)::float8 AS cost FROM continuation_bills WHERE ${TODAY}`,
    async run(c, dayStart) {
      return Number((await c.rows<{ cost: number }>([dayStart]))[0]?.cost ?? 0);
    },
  },

  recentBills: {
    sql: `SELECT cost::float8 AS cost, tokens::float8 AS tokens FROM continuation_bills
      WHERE session_id = $1 ORDER BY continued_at DESC LIMIT $2`,
    async run(c, sessionId, limit) {
      return asNumbers(await c.rows<{ cost: number; tokens: number }>([sessionId, limit]));
    },
  },

  recentBillsToday: {
    sql: `SELECT cost::float8 AS cost, tokens::float8 AS tokens FROM continuation_bills
      WHERE ${TODAY} ORDER BY recorded_at DESC LIMIT $2`,
    async run(c, dayStart, limit) {
      return asNumbers(await c.rows<{ cost: number; tokens: number }>([dayStart, limit]));
    },
  },

  addSpend: {
    sql: `UPDATE sessions SET continuation_cost = continuation_cost + $2, continuation_tokens = continuation_tokens + $3,
        updated_at = $4
      WHERE session_id = $1 AND coalesce(last_user_message_at, 0) <= $5 AND coalesce(resumed_at, 0) <= $5`,
    async run(c, sessionId, cost, tokens, now, continuedAt) {
      await c.rows([sessionId, cost, tokens, now, continuedAt]);
    },
  },

  unbilledOf: {
    sql: `SELECT latest.id FROM (SELECT id FROM injections WHERE session_id = $1 AND status IN ('sent', 'unknown')
        ORDER BY created_at DESC LIMIT 1) latest
      WHERE NOT EXISTS (SELECT 1 FROM continuation_bills b WHERE b.injection_id = latest.id)`,
    async run(c, sessionId) {
      return whole(await c.rows<{ id: string }>([sessionId]), ["id"])[0]?.id;
    },
  },

  unbilledIn: {
    sql: `SELECT i.id AS "injectionId", i.session_id AS "sessionId" FROM injections i
      WHERE i.directory = $1 AND i.server IS NOT DISTINCT FROM $2 AND i.status IN ('sent', 'unknown')
        AND i.created_at >= $3 AND NOT EXISTS (SELECT 1 FROM continuation_bills b WHERE b.injection_id = i.id)
      ORDER BY i.created_at`,
    async run(c, scope, since) {
      const rows = await c.rows<{ injectionId: string; sessionId: string }>([...scoped(scope), since]);
      return whole(rows, ["injectionId", "sessionId"]);
    },
  },
} satisfies SomePg;
