// The `injections` table: prepared once, used inside the store's transactions. An injection leaves `pending` once;
// a `failed` or `unknown` one becomes `sent` only when it is found in the session after all.
import { and, asc, desc, eq, gte, inArray, sql } from "drizzle-orm";
import { injections, type InjectionRow } from "../schema.js";
import type { ContinuationRef, NewInjection, Scope } from "../port.js";
import type { Db } from "./open.js";

const p = (name: string) => sql.placeholder(name);
const ps = (name: string) => sql`${sql.placeholder(name)}`;

function prepare(db: Db) {
  return {
    insert: db
      .insert(injections)
      .values({
        id: p("id"),
        sessionId: p("sessionId"),
        countdownId: p("countdownId"),
        directory: p("directory"),
        server: p("server"),
        messageId: p("messageId"),
        createdAt: p("createdAt"),
        status: "pending",
        agent: p("agent"),
        model: p("model"),
        variant: p("variant"),
        todosTotal: p("todosTotal"),
        todosOpen: p("todosOpen"),
        attempt: p("attempt"),
        onSent: p("onSent"),
        owner: p("owner"),
        leaseUntil: p("leaseUntil"),
        updatedAt: p("createdAt"),
      })
      .prepare(),
    get: db
      .select()
      .from(injections)
      .where(eq(injections.id, p("id")))
      .limit(1)
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
      .limit(1)
      .prepare(),
    pendingIn: db
      .select({ id: injections.id })
      .from(injections)
      .where(and(eq(injections.sessionId, p("sessionId")), eq(injections.status, "pending")))
      .limit(1)
      .prepare(),
    pendingInScope: db
      .select()
      .from(injections)
      .where(
        and(
          eq(injections.status, "pending"),
          eq(injections.directory, p("directory")),
          sql`${injections.server} IS ${p("server")}`,
        ),
      )
      .orderBy(asc(injections.createdAt))
      .prepare(),
  };
}

const changed = (result: unknown) => (result as { changes: number }).changes > 0;

export class InjectionTable {
  private readonly q: ReturnType<typeof prepare>;

  constructor(db: Db) {
    this.q = prepare(db);
  }

  get(id: string): InjectionRow | undefined {
    return this.q.get.get({ id });
  }

  insert(injection: NewInjection): void {
    this.q.insert.run({ onSent: null, ...injection, server: injection.server ?? null });
  }

  /** Pending → `status`; false when it was not pending. */
  finish(id: string, status: "sent" | "failed" | "unknown", error: string | null, now: number): boolean {
    return changed(this.q.finish.run({ id, status, error, now }));
  }

  /** Failed or unknown → sent; false when it was neither. */
  confirm(id: string, now: number): boolean {
    return changed(this.q.confirm.run({ id, now }));
  }

  hasPending(sessionId: string): boolean {
    return this.q.pendingIn.get({ sessionId }) !== undefined;
  }

  /** The latest continuation fired at or after `since` that was not refused. */
  firedSince(sessionId: string, since: number): ContinuationRef | undefined {
    return this.q.firedSince.get({ sessionId, since });
  }

  pendingIn(scope: Scope): InjectionRow[] {
    return this.q.pendingInScope.all({ directory: scope.directory, server: scope.server ?? null });
  }

  uncertainIn(sessionId: string, since: number): InjectionRow[] {
    return this.q.uncertainIn.all({ sessionId, since });
  }
}
