// The `sessions` table: prepared once, used inside the store's transactions (never on its own).
import { and, eq, isNotNull, lte, sql } from "drizzle-orm";
import { sessions, type SessionRow } from "../schema.js";
import type { Scope, SessionScope, SessionUpdate } from "../port.js";
import { PATCHABLE } from "../session-columns.js";
import type { Db } from "./open.js";

const p = (name: string) => sql.placeholder(name);
/** `set()` takes SQL rather than bare placeholders; the value is still bound when the prepared statement runs. */
const ps = (name: string) => sql`${sql.placeholder(name)}`;

type Patchable = (typeof PATCHABLE)[number];

function prepare(db: Db) {
  const set = Object.fromEntries(PATCHABLE.map((k) => [k, ps(k)])) as Record<Patchable, ReturnType<typeof ps>>;
  return {
    get: db
      .select()
      .from(sessions)
      .where(eq(sessions.sessionId, p("sessionId")))
      .limit(1)
      .prepare(),
    insert: db
      .insert(sessions)
      .values({
        sessionId: p("sessionId"),
        directory: p("directory"),
        server: p("server"),
        parentId: null,
        projectId: null,
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
      .select({ sessionId: sessions.sessionId, recheckAt: sessions.recheckAt })
      .from(sessions)
      .where(
        and(
          eq(sessions.directory, p("directory")),
          sql`${sessions.server} IS ${p("server")}`,
          isNotNull(sessions.recheckAt),
          lte(sessions.recheckAt, p("dueBy")),
        ),
      )
      .prepare(),
  };
}

export class SessionTable {
  private readonly q: ReturnType<typeof prepare>;

  constructor(db: Db) {
    this.q = prepare(db);
  }

  get(sessionId: string): SessionRow | undefined {
    return this.q.get.get({ sessionId });
  }

  /** The session's row, created first if it has none. */
  ensure(scope: SessionScope, now: number): SessionRow {
    const existing = this.q.get.get({ sessionId: scope.sessionId });
    if (existing) return existing;
    this.q.insert.run({ sessionId: scope.sessionId, directory: scope.directory, server: scope.server ?? null, now });
    return this.q.get.get({ sessionId: scope.sessionId })!;
  }

  /** Writes `row` with `update` applied; returns the row as written. */
  patch(row: SessionRow, update: SessionUpdate, now: number): SessionRow {
    const next = { ...row, ...update, updatedAt: now } as SessionRow;
    const values: Record<string, unknown> = { sessionId: row.sessionId, updatedAt: now };
    for (const key of PATCHABLE) values[key] = next[key] ?? null;
    this.q.write.run(values);
    return next;
  }

  toRecheck(scope: Scope, dueBy: number): Array<{ sessionId: string; recheckAt: number | null }> {
    return this.q.toRecheck.all({ directory: scope.directory, server: scope.server ?? null, dueBy });
  }
}
