// The countdowns on SQLite: arming, ending and firing one, and the leases their owners hold. Every write names the
// state it expects, so that of two writers only one changes a countdown.
import { and, asc, eq } from "drizzle-orm";
import { ownerMayBeAlive } from "../../owner.js";
import { countdowns } from "../../schema.js";
import { scopesAsJson } from "../../statements.js";
import { changes, inScope, inScopes, isArmed, p, placeholders, ps, scoped, type SomePrepared } from "./prepare.js";

// A recovery takes thousands of countdowns over: in one statement, their ids as one JSON array, rather than a
// statement run per row, which cost more than the work itself.
/** Bound: the owner, its lease, the owner expected, the ids (JSON); the ids taken. */
const TAKE_OVER = `UPDATE countdowns SET owner = ?, lease_until = ?
  WHERE state = 'armed' AND owner IS ? AND id IN (SELECT value FROM json_each(?)) RETURNING id`;
/** Bound: the time, the reason, the owner expected, the ids (JSON); the ids expired. */
const EXPIRE_ORPHANS = `UPDATE countdowns SET state = 'expired', ended_at = ?, end_reason = ?, lease_until = NULL
  WHERE state = 'armed' AND owner IS ? AND id IN (SELECT value FROM json_each(?)) RETURNING id`;

export const COUNTDOWNS = {
  countdown: ({ db }) => {
    const select = db
      .select()
      .from(countdowns)
      .where(eq(countdowns.id, p("id")))
      .prepare();
    return (id) => select.get({ id });
  },

  armedFor: ({ db }) => {
    const select = db
      .select({ id: countdowns.id, owner: countdowns.owner, leaseUntil: countdowns.leaseUntil })
      .from(countdowns)
      .where(and(eq(countdowns.sessionId, p("sessionId")), isArmed))
      .prepare();
    return (sessionId) => select.get({ sessionId });
  },

  armedIn: ({ db }) => {
    const select = db
      .select()
      .from(countdowns)
      .where(and(isArmed, inScope(countdowns)))
      .orderBy(asc(countdowns.deadlineAt))
      .prepare();
    return (scope) => select.all(scoped(scope));
  },

  armedInScopes: ({ db }) => {
    const select = db
      .select()
      .from(countdowns)
      .where(and(isArmed, inScopes(countdowns)))
      .orderBy(asc(countdowns.deadlineAt))
      .prepare();
    return (scopes) => select.all({ scopes: scopesAsJson(scopes) });
  },

  /** Alive unless certainly gone (same host, no such pid), and only while its lease has not run out. */
  ownerAlive: () => (owner, leaseUntil, now) => ownerMayBeAlive(owner) && (leaseUntil ?? 0) >= now,

  insertCountdown: ({ db, statements }) => {
    const insert = db
      .insert(countdowns)
      .values({
        ...placeholders("id", "sessionId", "directory", "server", "armedAt", "deadlineAt", "owner", "leaseUntil"),
        ...placeholders("attempt", "todosOpen", "todosTotal"),
        state: "armed",
      })
      .prepare();
    return (countdown, armed) => {
      insert.run({ ...countdown, server: countdown.server ?? null });
      statements.audit(armed);
    };
  },

  endCountdown: ({ db, statements }) => {
    const update = db
      .update(countdowns)
      .set({ state: ps("state"), endedAt: ps("now"), endReason: ps("reason"), leaseUntil: null })
      .where(and(eq(countdowns.id, p("id")), isArmed))
      .prepare();
    return (id, state, reason, now, audit) => {
      if (changes(update.run({ id, state, now, reason })) === 0) return false;
      statements.audit(audit);
      return true;
    };
  },

  claimCountdown: ({ db }) => {
    const update = db
      .update(countdowns)
      .set({ state: "fired", endedAt: ps("now"), endReason: null, leaseUntil: null })
      .where(and(eq(countdowns.id, p("id")), isArmed, eq(countdowns.owner, p("owner"))))
      .prepare();
    return (id, owner, now) => changes(update.run({ id, owner, now })) > 0;
  },

  // Compare-and-swap on the owner the caller saw: of two processes adopting the same orphan, one wins.
  takeOver: ({ raw }) => {
    const update = raw.prepare(TAKE_OVER);
    return (ids, expected, owner, leaseUntil) =>
      update.all<{ id: string }>(owner, leaseUntil, expected, JSON.stringify(ids)).map(({ id }) => id);
  },

  expireOrphans: ({ raw }) => {
    const update = raw.prepare(EXPIRE_ORPHANS);
    return (ids, expected, reason, now) =>
      update.all<{ id: string }>(now, reason, expected, JSON.stringify(ids)).map(({ id }) => id);
  },

  renewLeases: ({ db }) => {
    const update = db
      .update(countdowns)
      .set({ leaseUntil: ps("leaseUntil") })
      .where(and(eq(countdowns.owner, p("owner")), isArmed))
      .prepare();
    return (owner, leaseUntil) => changes(update.run({ owner, leaseUntil }));
  },

  releaseLeases: ({ db }) => {
    const update = db
      .update(countdowns)
      .set({ owner: null, leaseUntil: null })
      .where(and(eq(countdowns.owner, p("owner")), isArmed, inScopes(countdowns)))
      .prepare();
    return (owner, scopes) => changes(update.run({ owner, scopes: scopesAsJson(scopes) }));
  },
} satisfies SomePrepared;
