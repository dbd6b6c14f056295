// The sessions' rows on SQLite: what a change reads and writes of one, and the sessions owed a look.
import { and, eq, isNotNull, lte, sql } from "drizzle-orm";
import { sessions } from "../../schema.js";
import { PATCHABLE } from "../../session-columns.js";
import { scopesAsJson } from "../../statements.js";
import { inScopes, p, ps, scoped, type SomePrepared } from "./prepare.js";

const owedLook = { sessionId: sessions.sessionId, recheckAt: sessions.recheckAt, owedSince: sessions.owedSince };
const owed = and(isNotNull(sessions.recheckAt), lte(sessions.recheckAt, p("dueBy")));
/**
 * The scope, kept off the directory's index (a unary `+`): without statistics SQLite prefers it to the index of the
 * sessions owed a look, and a project's sessions all share its directory (100,000 of them: 10 ms a lease tick, not
 * 0.01).
 */
const inScopeUnindexed = sql`+${sessions.directory} = ${p("directory")} AND ${sessions.server} IS ${p("server")}`;

export const SESSIONS = {
  session: ({ db }) => {
    const select = db
      .select()
      .from(sessions)
      .where(eq(sessions.sessionId, p("sessionId")))
      .prepare();
    return (sessionId) => select.get({ sessionId });
  },

  insertSession: ({ db }) => {
    const insert = db
      .insert(sessions)
      .values({
        sessionId: p("sessionId"),
        directory: p("directory"),
        server: p("server"),
        createdAt: p("now"),
        updatedAt: p("now"),
      })
      .onConflictDoNothing()
      .prepare();
    return (scope, now) =>
      void insert.run({ sessionId: scope.sessionId, directory: scope.directory, server: scope.server ?? null, now });
  },

  writeSession: ({ db }) => {
    const update = db
      .update(sessions)
      .set({ ...Object.fromEntries(PATCHABLE.map((k) => [k, ps(k)])), updatedAt: ps("updatedAt") })
      .where(eq(sessions.sessionId, p("sessionId")))
      .prepare();
    return (row) => {
      const values: Record<string, unknown> = { sessionId: row.sessionId, updatedAt: row.updatedAt };
      for (const key of PATCHABLE) values[key] = row[key] ?? null;
      update.run(values);
    };
  },

  noteWake: ({ db }) => {
    const update = db
      .update(sessions)
      .set({
        recheckAt: ps("recheckAt"),
        owedSince: ps("owedSince"),
        wakeNote: ps("wakeNote"),
        updatedAt: ps("now"),
      })
      .where(eq(sessions.sessionId, p("sessionId")))
      .returning(owedLook)
      .prepare();
    return (sessionId, wake, now) => update.get({ sessionId, ...wake, now });
  },

  sessionsToRecheck: ({ db }) => {
    const select = db.select(owedLook).from(sessions).where(and(inScopeUnindexed, owed)).prepare();
    return (scope, dueBy) => select.all({ ...scoped(scope), dueBy });
  },

  sessionsToRecheckInScopes: ({ db }) => {
    const select = db
      .select({ ...owedLook, directory: sessions.directory, server: sessions.server })
      .from(sessions)
      .where(and(inScopes(sessions), owed))
      .prepare();
    return (scopes, dueBy) => select.all({ scopes: scopesAsJson(scopes), dueBy });
  },
} satisfies SomePrepared;
