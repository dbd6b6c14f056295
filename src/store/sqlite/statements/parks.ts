// The parks on SQLite: parking a session, parking it again in place, ending a park, and the parks a scope holds and
// those due. Every write names the state it expects (`parked`), so that of two writers only one changes a park.
import { and, asc, count, desc, eq, lte, or, sql } from "drizzle-orm";
import { parks } from "../../schema.js";
import { scopesAsJson } from "../../statements.js";
import type { ParkTerms } from "../../types.js";
import { changes, inScope, inScopes, p, placeholders, ps, scoped, type SomePrepared } from "./prepare.js";

// Written into the SQL, never bound: the value parks_one_parked_per_session and parks_due_idx name (see prepare.ts's
// isArmed).
const isParked = sql`${parks.state} = 'parked'`;
/**
 * Its wake time or its next check comes by `dueBy`. Each side names the parked state itself: SQLite then searches both
 * partial indexes (parks_due_idx, parks_check_due_idx) and joins the two, where `parked AND (a OR b)` scanned every
 * parked row (50,000 parked: 0.01 ms a lease tick, not 12). Not beside another `parked` term: with one, SQLite
 * scanned again.
 */
const due = or(and(isParked, lte(parks.wakeAt, p("dueBy"))), and(isParked, lte(parks.nextCheckAt, p("dueBy"))));
/** Whichever of its wake time and its next check comes first. */
const firstDue = sql`min(${parks.wakeAt}, coalesce(${parks.nextCheckAt}, ${parks.wakeAt}))`;

/** The columns of a park's terms: written whole by a park and by a park again in place. */
const TERMS = [
  "reason",
  "parkedAt",
  "wakeAt",
  "backoffMs",
  "checkCommand",
  "checkEveryMs",
  "checkRuns",
  "nextCheckAt",
  "detail",
] as const satisfies ReadonlyArray<keyof ParkTerms>;

export const PARKS = {
  parkOf: ({ db }) => {
    const select = db
      .select()
      .from(parks)
      .where(and(eq(parks.sessionId, p("sessionId")), isParked))
      .prepare();
    return (sessionId) => select.get({ sessionId });
  },

  lastParkOf: ({ db }) => {
    const select = db
      .select()
      .from(parks)
      .where(eq(parks.sessionId, p("sessionId")))
      .orderBy(desc(parks.parkedAt), desc(parks.id))
      .limit(1)
      .prepare();
    return (sessionId) => select.get({ sessionId });
  },

  insertPark: ({ db, statements }) => {
    const insert = db
      .insert(parks)
      .values({
        ...placeholders("id", "sessionId", "directory", "server", "since", ...TERMS),
        state: "parked",
      })
      .onConflictDoNothing()
      .prepare();
    return (park, parked) => {
      if (changes(insert.run({ ...park, server: park.server ?? null })) === 0) return false;
      statements.audit(parked);
      return true;
    };
  },

  endPark: ({ db }) => {
    const update = db
      .update(parks)
      .set({ state: ps("state"), endedAt: ps("now"), endReason: ps("reason"), leaseUntil: null })
      .where(
        and(
          eq(parks.sessionId, p("sessionId")),
          isParked,
          sql`(${p("dueBy")} IS NULL OR ${parks.wakeAt} <= ${p("dueBy")})`,
          sql`(${p("withCheck")} = 0 OR ${parks.checkCommand} IS NOT NULL)`,
          sql`(${p("only")} IS NULL OR ${parks.reason} = ${p("only")})`,
        ),
      )
      .returning()
      .prepare();
    return (sessionId, state, reason, now, { dueBy, withCheck, reason: only }) =>
      update.get({
        sessionId,
        state,
        now,
        reason,
        dueBy: dueBy ?? null,
        withCheck: withCheck ? 1 : 0,
        only: only ?? null,
      });
  },

  reparkPark: ({ db, statements }) => {
    const update = db
      .update(parks)
      .set({ ...Object.fromEntries(TERMS.map((term) => [term, ps(term)])), checkOutput: null })
      .where(and(eq(parks.id, p("id")), isParked))
      .prepare();
    return (id, terms, parked) => {
      if (changes(update.run({ ...terms, id })) === 0) return false;
      statements.audit(parked);
      return true;
    };
  },

  claimCheck: ({ db }) => {
    const update = db
      .update(parks)
      .set({ checkRuns: sql`${parks.checkRuns} + 1`, nextCheckAt: ps("nextCheckAt") })
      .where(and(eq(parks.id, p("id")), isParked, eq(parks.checkRuns, p("runs"))))
      .prepare();
    return (id, runs, nextCheckAt) => changes(update.run({ id, runs, nextCheckAt })) === 1;
  },

  recordCheckOutput: ({ db }) => {
    const update = db
      .update(parks)
      .set({ checkOutput: ps("output") })
      .where(and(eq(parks.id, p("id")), isParked))
      .prepare();
    return (id, output) => changes(update.run({ id, output })) === 1;
  },

  parksDueIn: ({ db }) => {
    const select = db
      .select()
      .from(parks)
      .where(and(inScope(parks), due))
      .orderBy(firstDue, asc(parks.id))
      .prepare();
    return (scope, dueBy) => select.all({ ...scoped(scope), dueBy });
  },

  parksDueInScopes: ({ db }) => {
    const select = db
      .select()
      .from(parks)
      .where(and(inScopes(parks), due))
      .orderBy(firstDue, asc(parks.id))
      .prepare();
    return (scopes, dueBy) => select.all({ scopes: scopesAsJson(scopes), dueBy });
  },

  countParked: ({ db }) => {
    // Counted in parks_one_parked_per_session, which holds only parked rows.
    const select = db.select({ n: count() }).from(parks).where(isParked).prepare();
    return () => select.get()?.n ?? 0;
  },

  parkedIn: ({ db }) => {
    const select = db
      .select()
      .from(parks)
      .where(and(isParked, inScope(parks)))
      .orderBy(asc(parks.wakeAt), asc(parks.id))
      .prepare();
    return (scope) => select.all(scoped(scope));
  },
} satisfies SomePrepared;
