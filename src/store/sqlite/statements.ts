// The statements of store/statements.ts over one SQLite connection, prepared once and answered synchronously: the
// store's runner drives a transaction script with them inside one BEGIN IMMEDIATE transaction. Every statement that
// changes a countdown or an injection names the state it expects, so that of two writers only one changes it.
import { and, asc, desc, eq, gte, inArray, isNotNull, lte, sql } from "drizzle-orm";
import type { AuditValues } from "../audit-row.js";
import { ownerMayBeAlive } from "../owner.js";
import {
  auditEvents,
  countdowns,
  injections,
  replicas,
  sessions,
  type CountdownRow,
  type InjectionRow,
  type SessionRow,
} from "../schema.js";
import { PATCHABLE } from "../session-columns.js";
import type { HistoryTable, Statements } from "../statements.js";
import type { ArmedRef, ContinuationRef, NewCountdown, NewInjection, Scope, SessionScope } from "../types.js";
import type { Db, RawDatabase } from "./connection.js";

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

/** Rows by their primary key, and the live ones of a scope (what a process recovers and reconciles). */
function prepareRows(db: Db) {
  const armed = and(isArmed, inScope(countdowns));
  const pending = and(eq(injections.status, "pending"), inScope(injections));
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
  };
}

function prepareSessions(db: Db) {
  const set = Object.fromEntries(PATCHABLE.map((k) => [k, ps(k)]));
  return {
    get: db
      .select()
      .from(sessions)
      .where(eq(sessions.sessionId, p("sessionId")))
      .prepare(),
    insert: db
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
    write: db
      .update(sessions)
      .set({ ...set, updatedAt: ps("updatedAt") })
      .where(eq(sessions.sessionId, p("sessionId")))
      .prepare(),
    toRecheck: db
      .select({ sessionId: sessions.sessionId, recheckAt: sessions.recheckAt, owedSince: sessions.owedSince })
      .from(sessions)
      .where(and(inScope(sessions), isNotNull(sessions.recheckAt), lte(sessions.recheckAt, p("dueBy"))))
      .prepare(),
  };
}

function prepareAudit(db: Db) {
  return {
    insert: db
      .insert(auditEvents)
      .values(placeholders("at", "sessionId", "directory", "server", "event", "reason", "detail"))
      .prepare(),
    // Walks audit_session_idx (session, at): a handful of rows at most.
    userCancel: db
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
  };
}

function prepareCountdowns(db: Db) {
  return {
    armedFor: db
      .select({ id: countdowns.id, owner: countdowns.owner, leaseUntil: countdowns.leaseUntil })
      .from(countdowns)
      .where(and(eq(countdowns.sessionId, p("sessionId")), isArmed))
      .prepare(),
    insert: db
      .insert(countdowns)
      .values({
        ...placeholders("id", "sessionId", "directory", "server", "armedAt", "deadlineAt", "owner", "leaseUntil"),
        ...placeholders("attempt", "todosOpen", "todosTotal"),
        state: "armed",
      })
      .prepare(),
    end: db
      .update(countdowns)
      .set({ state: ps("state"), endedAt: ps("now"), endReason: ps("reason"), leaseUntil: null })
      .where(and(eq(countdowns.id, p("id")), isArmed))
      .prepare(),
    claim: db
      .update(countdowns)
      .set({ state: "fired", endedAt: ps("now"), endReason: null, leaseUntil: null })
      .where(and(eq(countdowns.id, p("id")), isArmed, eq(countdowns.owner, p("owner"))))
      .prepare(),
    // Compare-and-swap on the owner the caller saw: of two processes adopting the same orphan, one wins.
    takeOver: db
      .update(countdowns)
      .set({ owner: ps("owner"), leaseUntil: ps("leaseUntil") })
      .where(and(eq(countdowns.id, p("id")), isArmed, sql`${countdowns.owner} IS ${p("expected")}`))
      .prepare(),
    renew: db
      .update(countdowns)
      .set({ leaseUntil: ps("leaseUntil") })
      .where(and(eq(countdowns.owner, p("owner")), isArmed))
      .prepare(),
    release: db
      .update(countdowns)
      .set({ owner: null, leaseUntil: null })
      .where(and(eq(countdowns.owner, p("owner")), isArmed, inScope(countdowns)))
      .prepare(),
  };
}

function prepareInjections(db: Db) {
  return {
    insert: db
      .insert(injections)
      .values({
        ...placeholders("id", "sessionId", "countdownId", "directory", "server", "messageId", "createdAt", "agent"),
        ...placeholders("model", "variant", "todosTotal", "todosOpen", "attempt", "onSent", "owner", "leaseUntil"),
        status: "pending",
        updatedAt: p("createdAt"),
      })
      .prepare(),
    finish: db
      .update(injections)
      .set({ status: ps("status"), error: ps("error"), updatedAt: ps("now"), leaseUntil: null })
      .where(and(eq(injections.id, p("id")), eq(injections.status, "pending")))
      .prepare(),
    confirm: db
      .update(injections)
      .set({ status: "sent", updatedAt: ps("now"), leaseUntil: null })
      .where(and(eq(injections.id, p("id")), inArray(injections.status, ["failed", "unknown"])))
      .prepare(),
    ...prepareInjectionReads(db),
  };
}

function prepareInjectionReads(db: Db) {
  return {
    pendingOf: db
      .select({ id: injections.id })
      .from(injections)
      .where(and(eq(injections.sessionId, p("sessionId")), eq(injections.status, "pending")))
      .prepare(),
    // Walks injections_session_idx (session, created_at): the few rows since a look began.
    firedSince: db
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
  };
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
  };
}

const changes = (result: unknown) => (result as { changes: number }).changes;
const scoped = (scope: Scope) => ({ directory: scope.directory, server: scope.server ?? null });

export class SqliteStatements implements Statements {
  private readonly rows;
  private readonly s;
  private readonly a;
  private readonly c;
  private readonly i;
  private readonly r;

  constructor(
    db: Db,
    private readonly raw: RawDatabase,
  ) {
    this.rows = prepareRows(db);
    this.s = prepareSessions(db);
    this.a = prepareAudit(db);
    this.c = prepareCountdowns(db);
    this.i = prepareInjections(db);
    this.r = prepareReplicas(db);
  }

  session(sessionId: string): SessionRow | undefined {
    return this.s.get.get({ sessionId });
  }

  insertSession(scope: SessionScope, now: number): void {
    this.s.insert.run({ sessionId: scope.sessionId, directory: scope.directory, server: scope.server ?? null, now });
  }

  writeSession(row: SessionRow): void {
    const values: Record<string, unknown> = { sessionId: row.sessionId, updatedAt: row.updatedAt };
    for (const key of PATCHABLE) values[key] = row[key] ?? null;
    this.s.write.run(values);
  }

  sessionsToRecheck(scope: Scope, dueBy: number) {
    return this.s.toRecheck.all({ ...scoped(scope), dueBy });
  }

  audit(row: AuditValues): void {
    this.a.insert.run({ ...row });
  }

  auditMany(rows: AuditValues[]): void {
    for (const row of rows) this.a.insert.run({ ...row });
  }

  // One file, one host, one clock: the times every writer stamped compare as they are.
  userCancelledSince(sessionId: string, since: number): number | undefined {
    return this.a.userCancel.get({ sessionId, since })?.at;
  }

  countdown(id: string): CountdownRow | undefined {
    return this.rows.countdown.get({ id });
  }

  armedFor(sessionId: string): ArmedRef | undefined {
    return this.c.armedFor.get({ sessionId });
  }

  armedIn(scope: Scope): CountdownRow[] {
    return this.rows.armedIn.all(scoped(scope));
  }

  /** Alive unless certainly gone (same host, no such pid), and only while its lease has not run out. */
  ownerAlive(owner: string | null, leaseUntil: number | null, now: number): boolean {
    return ownerMayBeAlive(owner) && (leaseUntil ?? 0) >= now;
  }

  insertCountdown(countdown: NewCountdown, armed: AuditValues): void {
    this.c.insert.run({ ...countdown, server: countdown.server ?? null });
    this.a.insert.run({ ...armed });
  }

  endCountdown(id: string, state: "cancelled" | "expired", reason: string, now: number, audit: AuditValues): boolean {
    if (changes(this.c.end.run({ id, state, now, reason })) === 0) return false;
    this.a.insert.run({ ...audit });
    return true;
  }

  claimCountdown(id: string, owner: string, now: number): boolean {
    return changes(this.c.claim.run({ id, owner, now })) > 0;
  }

  takeOver(
    candidates: ReadonlyArray<{ id: string; owner: string | null }>,
    owner: string,
    leaseUntil: number,
  ): string[] {
    return candidates
      .filter(({ id, owner: expected }) => changes(this.c.takeOver.run({ id, expected, owner, leaseUntil })) > 0)
      .map(({ id }) => id);
  }

  renewLeases(owner: string, leaseUntil: number): number {
    return changes(this.c.renew.run({ owner, leaseUntil }));
  }

  releaseLeases(owner: string, scope: Scope): number {
    return changes(this.c.release.run({ owner, ...scoped(scope) }));
  }

  injection(id: string): InjectionRow | undefined {
    return this.rows.injection.get({ id });
  }

  insertInjection(injection: NewInjection): void {
    this.i.insert.run({ onSent: null, ...injection, server: injection.server ?? null });
  }

  finishInjection(id: string, status: "sent" | "failed" | "unknown", error: string | null, now: number): boolean {
    return changes(this.i.finish.run({ id, status, error, now })) > 0;
  }

  confirmInjection(id: string, now: number): boolean {
    return changes(this.i.confirm.run({ id, now })) > 0;
  }

  hasPendingInjection(sessionId: string): boolean {
    return this.i.pendingOf.get({ sessionId }) !== undefined;
  }

  tuiWatching(directory: string, now: number): boolean {
    return this.r.tuiWatching.get({ directory, now }) !== undefined;
  }

  continuedSince(sessionId: string, since: number): ContinuationRef | undefined {
    return this.i.firedSince.get({ sessionId, since });
  }

  pendingIn(scope: Scope): InjectionRow[] {
    return this.rows.pendingIn.all(scoped(scope));
  }

  uncertainIn(sessionId: string, since: number): InjectionRow[] {
    return this.i.uncertainIn.all({ sessionId, since });
  }

  deleteHistory(table: HistoryTable, settled: string, cutoff: number, limit: number): number {
    return this.raw.run(
      `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${settled} LIMIT ?)`,
      cutoff,
      limit,
    ).changes;
  }

  countHistory(table: HistoryTable, settled: string, cutoff: number): number {
    return this.raw.all<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${settled}`, cutoff)[0]?.n ?? 0;
  }
}
