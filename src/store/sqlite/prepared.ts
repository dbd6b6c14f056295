// The statements of one SQLite connection, prepared once (drizzle builds each one's SQL a single time; the store then
// only binds and runs). What each means is in ../statements.ts; statements.ts answers them with these.
import { and, asc, desc, eq, getTableColumns, gte, inArray, isNotNull, lte, sql } from "drizzle-orm";
import { auditEvents, continuationBills, countdowns, injections, replicas, sessions } from "../schema.js";
import { PATCHABLE } from "../session-columns.js";
import type { Statements } from "../statements.js";
import type { Scope } from "../types.js";
import type { Db, RawDatabase } from "./connection.js";

/** What a group of prepared statements may be called: the statement of ../statements.ts each answers. */
type Named = { readonly [K in keyof Statements]?: unknown };

const p = (name: string) => sql.placeholder(name);
/** Each column bound to the parameter of the same name. */
const placeholders = <K extends string>(...names: K[]) =>
  Object.fromEntries(names.map((name) => [name, p(name)])) as Record<K, ReturnType<typeof p>>;
/** `set()` takes SQL rather than bare placeholders; the value is still bound when the prepared statement runs. */
const ps = (name: string) => sql`${sql.placeholder(name)}`;
// SQLite re-plans a statement at every run when a bound value can change its plan: the value a partial index names,
// and a LIMIT. So `state = 'armed'` (countdowns_one_armed_per_session) is written into the SQL, never bound, and a
// statement read with `get()` has no LIMIT (get() steps to the first row and stops). Bound, each one added 4–7 µs of
// CPU to every run of a 3 µs look-up.
const isArmed = sql`${countdowns.state} = 'armed'`;
/** A row's scope: its directory on its server (NULL, a machine's own, matches NULL). */
const inScope = (table: typeof sessions | typeof countdowns | typeof injections) =>
  and(eq(table.directory, p("directory")), sql`${table.server} IS ${p("server")}`);

/**
 * A row of any of several scopes, bound as one JSON array of `[directory, server]` pairs (statements.ts
 * `scopesAsJson`): what a fleet replica reads for all its servers at once.
 */
const inScopes = (table: typeof sessions | typeof countdowns | typeof injections) =>
  sql`EXISTS (SELECT 1 FROM json_each(${p("scopes")}) AS scope
    WHERE scope.value ->> 0 = ${table.directory} AND scope.value ->> 1 IS ${table.server})`;

/** Rows by their primary key, and the live ones of a scope (what a process recovers and reconciles). */
function prepareRows(db: Db) {
  const armed = and(isArmed, inScope(countdowns));
  const pending = and(eq(injections.status, "pending"), inScope(injections));
  const armedInScopes = and(isArmed, inScopes(countdowns));
  const pendingInScopes = and(eq(injections.status, "pending"), inScopes(injections));
  return {
    countdown: db
      .select()
      .from(countdowns)
      .where(eq(countdowns.id, p("id")))
      .prepare(),
    injection: db
      .select()
      .from(injections)
      .where(eq(injections.id, p("id")))
      .prepare(),
    armedIn: db.select().from(countdowns).where(armed).orderBy(asc(countdowns.deadlineAt)).prepare(),
    pendingIn: db.select().from(injections).where(pending).orderBy(asc(injections.createdAt)).prepare(),
    armedInScopes: db.select().from(countdowns).where(armedInScopes).orderBy(asc(countdowns.deadlineAt)).prepare(),
    pendingInScopes: db.select().from(injections).where(pendingInScopes).orderBy(asc(injections.createdAt)).prepare(),
  } satisfies Named;
}

function prepareSessions(db: Db) {
  const set = Object.fromEntries(PATCHABLE.map((k) => [k, ps(k)]));
  const owedLook = { sessionId: sessions.sessionId, recheckAt: sessions.recheckAt, owedSince: sessions.owedSince };
  const owed = and(isNotNull(sessions.recheckAt), lte(sessions.recheckAt, p("dueBy")));
  return {
    session: db
      .select()
      .from(sessions)
      .where(eq(sessions.sessionId, p("sessionId")))
      .prepare(),
    insertSession: db
      .insert(sessions)
      .values({
        sessionId: p("sessionId"),
        directory: p("directory"),
        server: p("server"),
        createdAt: p("now"),
        updatedAt: p("now"),
      })
      .onConflictDoNothing()
      .prepare(),
    writeSession: db
      .update(sessions)
      .set({ ...set, updatedAt: ps("updatedAt") })
      .where(eq(sessions.sessionId, p("sessionId")))
      .prepare(),
    addSpend: db
      .update(sessions)
      .set({
        continuationCost: sql`${sessions.continuationCost} + ${p("cost")}`,
        continuationTokens: sql`${sessions.continuationTokens} + ${p("tokens")}`,
        updatedAt: ps("now"),
      })
      .where(eq(sessions.sessionId, p("sessionId")))
      .prepare(),
    sessionsToRecheck: db
      .select(owedLook)
      .from(sessions)
      .where(and(inScope(sessions), owed))
      .prepare(),
    sessionsToRecheckInScopes: db
      .select({ ...owedLook, directory: sessions.directory, server: sessions.server })
      .from(sessions)
      .where(and(inScopes(sessions), owed))
      .prepare(),
  } satisfies Named;
}

function prepareAudit(db: Db, raw: RawDatabase) {
  return {
    audit: raw.prepare(INSERT_AUDIT_ROW),
    // Walks audit_session_idx (session, at): a handful of rows at most.
    userCancelledSince: db
      .select({ at: auditEvents.at })
      .from(auditEvents)
      .where(
        and(
          eq(auditEvents.sessionId, p("sessionId")),
          gte(auditEvents.at, p("since")),
          eq(auditEvents.event, "cancelled"),
          eq(auditEvents.reason, "user_key"),
        ),
      )
      .orderBy(desc(auditEvents.at))
      .prepare(),
  } satisfies Named;
}

function prepareCountdowns(db: Db) {
  return {
    armedFor: db
      .select({ id: countdowns.id, owner: countdowns.owner, leaseUntil: countdowns.leaseUntil })
      .from(countdowns)
      .where(and(eq(countdowns.sessionId, p("sessionId")), isArmed))
      .prepare(),
    insertCountdown: db
      .insert(countdowns)
      .values({
        ...placeholders("id", "sessionId", "directory", "server", "armedAt", "deadlineAt", "owner", "leaseUntil"),
        ...placeholders("attempt", "todosOpen", "todosTotal"),
        state: "armed",
      })
      .prepare(),
    endCountdown: db
      .update(countdowns)
      .set({ state: ps("state"), endedAt: ps("now"), endReason: ps("reason"), leaseUntil: null })
      .where(and(eq(countdowns.id, p("id")), isArmed))
      .prepare(),
    claimCountdown: db
      .update(countdowns)
      .set({ state: "fired", endedAt: ps("now"), endReason: null, leaseUntil: null })
      .where(and(eq(countdowns.id, p("id")), isArmed, eq(countdowns.owner, p("owner"))))
      .prepare(),
    // Compare-and-swap on the owner the caller saw: of two processes adopting the same orphan, one wins.
    renewLeases: db
      .update(countdowns)
      .set({ leaseUntil: ps("leaseUntil") })
      .where(and(eq(countdowns.owner, p("owner")), isArmed))
      .prepare(),
    releaseLeases: db
      .update(countdowns)
      .set({ owner: null, leaseUntil: null })
      .where(and(eq(countdowns.owner, p("owner")), isArmed, inScopes(countdowns)))
      .prepare(),
  } satisfies Named;
}

function prepareInjections(db: Db) {
  return {
    insertInjection: db
      .insert(injections)
      .values({
        ...placeholders("id", "sessionId", "countdownId", "directory", "server", "messageId", "createdAt", "agent"),
        ...placeholders("model", "variant", "todosTotal", "todosOpen", "attempt", "onSent", "owner", "leaseUntil"),
        status: "pending",
        updatedAt: p("createdAt"),
      })
      .prepare(),
    finishInjection: db
      .update(injections)
      .set({ status: ps("status"), error: ps("error"), updatedAt: ps("now"), leaseUntil: null })
      .where(and(eq(injections.id, p("id")), eq(injections.status, "pending")))
      .prepare(),
    confirmInjection: db
      .update(injections)
      .set({ status: "sent", updatedAt: ps("now"), leaseUntil: null })
      .where(and(eq(injections.id, p("id")), inArray(injections.status, ["failed", "unknown"])))
      .prepare(),
    ...prepareInjectionReads(db),
  } satisfies Named;
}

function prepareInjectionReads(db: Db) {
  return {
    hasPendingInjection: db
      .select({ id: injections.id })
      .from(injections)
      .where(and(eq(injections.sessionId, p("sessionId")), eq(injections.status, "pending")))
      .prepare(),
    // Walks injections_session_idx (session, created_at): the few rows since a look began.
    continuedSince: db
      .select({ injectionId: injections.id, firedAt: injections.createdAt })
      .from(injections)
      .where(
        and(
          eq(injections.sessionId, p("sessionId")),
          gte(injections.createdAt, p("since")),
          inArray(injections.status, ["pending", "sent", "unknown"]),
        ),
      )
      .orderBy(desc(injections.createdAt))
      .prepare(),
    uncertainIn: db
      .select()
      .from(injections)
      .where(
        and(
          eq(injections.sessionId, p("sessionId")),
          gte(injections.createdAt, p("since")),
          inArray(injections.status, ["failed", "unknown"]),
        ),
      )
      .orderBy(desc(injections.createdAt))
      .limit(10)
      .prepare(),
  } satisfies Named;
}

function prepareReplicas(db: Db) {
  return {
    tuiWatching: db
      .select({ id: replicas.id })
      .from(replicas)
      .where(
        and(
          eq(replicas.kind, "tui"),
          eq(replicas.directory, p("directory")),
          gte(sql`${replicas.heartbeatAt} + ${replicas.leaseMs}`, p("now")),
        ),
      )
      .prepare(),
  } satisfies Named;
}

// A recovery takes thousands of countdowns over: in one statement, their ids as one JSON array, rather than a
// statement run per row, which cost more than the work itself.
/** Bound: the owner, its lease, the owner expected, the ids (JSON); the ids taken. */
export const TAKE_OVER = `UPDATE countdowns SET owner = ?, lease_until = ?
  WHERE state = 'armed' AND owner IS ? AND id IN (SELECT value FROM json_each(?)) RETURNING id`;
/** Bound: the time, the reason, the owner expected, the ids (JSON); the ids expired. */
export const EXPIRE_ORPHANS = `UPDATE countdowns SET state = 'expired', ended_at = ?, end_reason = ?, lease_until = NULL
  WHERE state = 'armed' AND owner IS ? AND id IN (SELECT value FROM json_each(?)) RETURNING id`;
/**
 * One audit row (bound in AuditValues' order), prepared on the driver itself: every state change writes one or more,
 * a recovery thousands in a row.
 */
const INSERT_AUDIT_ROW = `INSERT INTO audit_events (at, session_id, directory, server, event, reason, detail)
  VALUES (?, ?, ?, ?, ?, ?, ?)`;

export const changes = (result: unknown) => (result as { changes: number }).changes;
export const scoped = (scope: Scope) => ({ directory: scope.directory, server: scope.server ?? null });

const BILL_COLUMNS = getTableColumns(continuationBills);
/** Every column of a bill, bound in this order: a bill names them all (null where it has no value). */
export const BILL_KEYS = Object.keys(BILL_COLUMNS) as Array<keyof typeof BILL_COLUMNS>;

/**
 * A bill (bound in BILL_KEYS' order), prepared on the driver itself: drizzle binding 29 values by name cost a third of
 * recording one.
 */
const INSERT_BILL = `INSERT INTO continuation_bills (${BILL_KEYS.map((key) => BILL_COLUMNS[key].name).join(", ")})
  VALUES (${BILL_KEYS.map(() => "?").join(", ")}) ON CONFLICT DO NOTHING`;

function prepareBills(db: Db, raw: RawDatabase) {
  return {
    insertBill: raw.prepare(INSERT_BILL),
    spentSince: db
      .select({ cost: sql<number>`coalesce(sum(${continuationBills.cost}), 0)` })
      .from(continuationBills)
      .where(gte(continuationBills.recordedAt, p("since")))
      .prepare(),
    recentBillsToday: db
      .select({ cost: continuationBills.cost, tokens: continuationBills.tokens })
      .from(continuationBills)
      .where(gte(continuationBills.recordedAt, p("since")))
      .orderBy(desc(continuationBills.recordedAt))
      .limit(p("limit"))
      .prepare(),
    recentBills: db
      .select({ cost: continuationBills.cost, tokens: continuationBills.tokens })
      .from(continuationBills)
      .where(eq(continuationBills.sessionId, p("sessionId")))
      .orderBy(desc(continuationBills.continuedAt))
      .limit(p("limit"))
      .prepare(),
    unbilledOf: db
      .select({
        id: injections.id,
        billed: sql<number>`EXISTS (SELECT 1 FROM ${continuationBills} WHERE ${continuationBills.injectionId} = ${injections.id})`,
      })
      .from(injections)
      .where(and(eq(injections.sessionId, p("sessionId")), sql`${injections.status} IN ('sent', 'unknown')`))
      .orderBy(desc(injections.createdAt))
      .prepare(),
    unbilledIn: db
      .select({ injectionId: injections.id, sessionId: injections.sessionId })
      .from(injections)
      .where(
        and(
          inScope(injections),
          sql`${injections.status} IN ('sent', 'unknown')`,
          gte(injections.createdAt, p("since")),
          sql`NOT EXISTS (SELECT 1 FROM ${continuationBills} WHERE ${continuationBills.injectionId} = ${injections.id})`,
        ),
      )
      .orderBy(asc(injections.createdAt))
      .prepare(),
  } satisfies Named;
}

/**
 * Every statement of the connection, each under the name of the statement of ../statements.ts it answers (takeOver and
 * expireOrphans excepted: their SQL, TAKE_OVER and EXPIRE_ORPHANS, binds a JSON array the driver runs as it is).
 */
export function prepareStatements(db: Db, raw: RawDatabase) {
  return {
    ...prepareRows(db),
    ...prepareSessions(db),
    ...prepareAudit(db, raw),
    ...prepareCountdowns(db),
    ...prepareInjections(db),
    ...prepareReplicas(db),
    ...prepareBills(db, raw),
  };
}
