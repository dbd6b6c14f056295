// What continuations cost, on SQLite: their bills, the spend the budgets read, and the continuations still unbilled.
import { and, asc, desc, eq, getTableColumns, gte, sql } from "drizzle-orm";
import { continuationBills, injections, sessions } from "../../schema.js";
import { inScope, p, ps, scoped, type SomePrepared } from "./prepare.js";

const BILL_COLUMNS = getTableColumns(continuationBills);
/** Every column of a bill, bound in this order: a bill names them all (null where it has no value). */
const BILL_KEYS = Object.keys(BILL_COLUMNS) as Array<keyof typeof BILL_COLUMNS>;

/**
 * A bill (bound in BILL_KEYS' order), prepared on the driver itself: drizzle binding 29 values by name cost a third of
 * recording one.
 */
const INSERT_BILL = `INSERT INTO continuation_bills (${BILL_KEYS.map((key) => BILL_COLUMNS[key].name).join(", ")})
  VALUES (${BILL_KEYS.map(() => "?").join(", ")}) ON CONFLICT DO NOTHING`;

const sentOrUnknown = sql`${injections.status} IN ('sent', 'unknown')`;
const billed = sql`EXISTS (SELECT 1 FROM ${continuationBills} WHERE ${continuationBills.injectionId} = ${injections.id})`;

export const BILLS = {
  insertBill: ({ raw }) => {
    const insert = raw.prepare(INSERT_BILL);
    return (bill) => insert.run(...BILL_KEYS.map((k) => bill[k] ?? null)).changes > 0;
  },

  spentSince: ({ db }) => {
    const select = db
      .select({ cost: sql<number>`coalesce(sum(${continuationBills.cost}), 0)` })
      .from(continuationBills)
      .where(gte(continuationBills.recordedAt, p("since")))
      .prepare();
    return (dayStart) => select.get({ since: dayStart })?.cost ?? 0;
  },

  recentBills: ({ db }) => {
    const select = db
      .select({ cost: continuationBills.cost, tokens: continuationBills.tokens })
      .from(continuationBills)
      .where(eq(continuationBills.sessionId, p("sessionId")))
      .orderBy(desc(continuationBills.continuedAt))
      .limit(p("limit"))
      .prepare();
    return (sessionId, limit) => select.all({ sessionId, limit });
  },

  recentBillsToday: ({ db }) => {
    const select = db
      .select({ cost: continuationBills.cost, tokens: continuationBills.tokens })
      .from(continuationBills)
      .where(gte(continuationBills.recordedAt, p("since")))
      .orderBy(desc(continuationBills.recordedAt))
      .limit(p("limit"))
      .prepare();
    return (dayStart, limit) => select.all({ since: dayStart, limit });
  },

  addSpend: ({ db }) => {
    const update = db
      .update(sessions)
      .set({
        continuationCost: sql`${sessions.continuationCost} + ${p("cost")}`,
        continuationTokens: sql`${sessions.continuationTokens} + ${p("tokens")}`,
        updatedAt: ps("now"),
      })
      .where(
        and(
          eq(sessions.sessionId, p("sessionId")),
          sql`coalesce(${sessions.lastUserMessageAt}, 0) <= ${p("continuedAt")}`,
          sql`coalesce(${sessions.resumedAt}, 0) <= ${p("continuedAt")}`,
        ),
      )
      .prepare();
    return (sessionId, cost, tokens, now, continuedAt) =>
      void update.run({ sessionId, cost, tokens, now, continuedAt });
  },

  unbilledOf: ({ db }) => {
    const select = db
      .select({ id: injections.id, billed: sql<number>`${billed}` })
      .from(injections)
      .where(and(eq(injections.sessionId, p("sessionId")), sentOrUnknown))
      .orderBy(desc(injections.createdAt))
      .prepare();
    return (sessionId) => {
      const latest = select.get({ sessionId });
      return latest && !latest.billed ? latest.id : undefined;
    };
  },

  unbilledIn: ({ db }) => {
    const select = db
      .select({ injectionId: injections.id, sessionId: injections.sessionId })
      .from(injections)
      .where(and(inScope(injections), sentOrUnknown, gte(injections.createdAt, p("since")), sql`NOT ${billed}`))
      .orderBy(asc(injections.createdAt))
      .prepare();
    return (scope, since) => select.all({ ...scoped(scope), since });
  },
} satisfies SomePrepared;
