// The `countdowns` table: prepared once, used inside the store's transactions. Every statement that changes a
// countdown names the state it expects (`armed`), so that of two writers only one changes it.
import { and, asc, eq, sql } from "drizzle-orm";
import { countdowns, type CountdownRow } from "../schema.js";
import type { ArmedRef, NewCountdown, Scope } from "../port.js";
import type { Db } from "./open.js";

const p = (name: string) => sql.placeholder(name);
const ps = (name: string) => sql`${sql.placeholder(name)}`;

function prepare(db: Db) {
  return {
    armedFor: db
      .select({ id: countdowns.id, owner: countdowns.owner, leaseUntil: countdowns.leaseUntil })
      .from(countdowns)
      .where(and(eq(countdowns.sessionId, p("sessionId")), eq(countdowns.state, "armed")))
      .limit(1)
      .prepare(),
    get: db
      .select()
      .from(countdowns)
      .where(eq(countdowns.id, p("id")))
      .limit(1)
      .prepare(),
    insert: db
      .insert(countdowns)
      .values({
        id: p("id"),
        sessionId: p("sessionId"),
        directory: p("directory"),
        server: p("server"),
        armedAt: p("armedAt"),
        deadlineAt: p("deadlineAt"),
        state: "armed",
        owner: p("owner"),
        leaseUntil: p("leaseUntil"),
        attempt: p("attempt"),
        todosOpen: p("todosOpen"),
        todosTotal: p("todosTotal"),
      })
      .prepare(),
    end: db
      .update(countdowns)
      .set({ state: ps("state"), endedAt: ps("now"), endReason: ps("reason"), leaseUntil: null })
      .where(and(eq(countdowns.id, p("id")), eq(countdowns.state, "armed")))
      .prepare(),
    claim: db
      .update(countdowns)
      .set({ state: "fired", endedAt: ps("now"), endReason: null, leaseUntil: null })
      .where(and(eq(countdowns.id, p("id")), eq(countdowns.state, "armed"), eq(countdowns.owner, p("owner"))))
      .prepare(),
    // Compare-and-swap on the owner the caller saw: of two processes adopting the same orphan, one wins.
    takeOver: db
      .update(countdowns)
      .set({ owner: ps("owner"), leaseUntil: ps("leaseUntil") })
      .where(
        and(
          eq(countdowns.id, p("id")),
          eq(countdowns.state, "armed"),
          sql`${countdowns.owner} IS ${p("expectedOwner")}`,
        ),
      )
      .prepare(),
    armedIn: db
      .select()
      .from(countdowns)
      .where(
        and(
          eq(countdowns.state, "armed"),
          eq(countdowns.directory, p("directory")),
          sql`${countdowns.server} IS ${p("server")}`,
        ),
      )
      .orderBy(asc(countdowns.deadlineAt))
      .prepare(),
    renew: db
      .update(countdowns)
      .set({ leaseUntil: ps("leaseUntil") })
      .where(and(eq(countdowns.owner, p("owner")), eq(countdowns.state, "armed")))
      .prepare(),
    release: db
      .update(countdowns)
      .set({ owner: null, leaseUntil: null })
      .where(
        and(
          eq(countdowns.owner, p("owner")),
          eq(countdowns.state, "armed"),
          eq(countdowns.directory, p("directory")),
          sql`${countdowns.server} IS ${p("server")}`,
        ),
      )
      .prepare(),
  };
}

const changed = (result: unknown) => (result as { changes: number }).changes;

export class CountdownTable {
  private readonly q: ReturnType<typeof prepare>;

  constructor(db: Db) {
    this.q = prepare(db);
  }

  get(id: string): CountdownRow | undefined {
    return this.q.get.get({ id });
  }

  armedFor(sessionId: string): ArmedRef | undefined {
    return this.q.armedFor.get({ sessionId });
  }

  armedIn(scope: Scope): CountdownRow[] {
    return this.q.armedIn.all({ directory: scope.directory, server: scope.server ?? null });
  }

  insert(countdown: NewCountdown): void {
    this.q.insert.run({ ...countdown, server: countdown.server ?? null });
  }

  /** Armed → `state`; false when it was no longer armed. */
  end(id: string, state: "cancelled" | "expired", reason: string, now: number): boolean {
    return changed(this.q.end.run({ id, state, now, reason })) > 0;
  }

  /** Armed → fired, for its owner only. */
  claim(id: string, owner: string, now: number): boolean {
    return changed(this.q.claim.run({ id, owner, now })) > 0;
  }

  takeOver(id: string, expectedOwner: string | null, owner: string, leaseUntil: number): boolean {
    return changed(this.q.takeOver.run({ id, owner, expectedOwner, leaseUntil })) > 0;
  }

  renew(owner: string, leaseUntil: number): number {
    return changed(this.q.renew.run({ owner, leaseUntil }));
  }

  release(owner: string, scope: Scope): number {
    return changed(this.q.release.run({ owner, directory: scope.directory, server: scope.server ?? null }));
  }
}
