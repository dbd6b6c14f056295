// The sessions' rows on SQLite: what a change reads and writes of one, and the sessions owed a look.
import { and, eq, getTableColumns, isNotNull, lte, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { sessions, type SessionRow } from "../../schema.js";
import { sessionStateOf, splitStateRow } from "../../session-state.js";
import { PATCHABLE, patchedColumns, type PatchableColumn } from "../../session-columns.js";
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

/**
 * `sessionState` in one statement: the session's row (NULLs when it has none) beside the other tables' answers, each
 * found by the session's own index (a pending continuation by injections_session_idx, the park and the armed countdown
 * by their one-per-session indexes, the key and the continuation since the idle by their session indexes). Without an
 * idle, `since` is NULL and those two find nothing. One file, one host, one clock: `since` compares with the writing
 * process's time as it is.
 */
const SESSION_STATE = `SELECT
    ${Object.entries(getTableColumns(sessions) as Record<string, SQLiteColumn>)
      .map(([key, column]) => `s.${column.name} AS "${key}"`)
      .join(", ")},
    EXISTS (SELECT 1 FROM injections WHERE session_id = k.id AND status = 'pending') AS "pending",
    p.id AS "parkId", p.reason AS "parkReason", p.wake_at AS "parkWakeAt",
    c.id AS "armedId", c.owner AS "armedOwner", c.lease_until AS "armedLeaseUntil",
    (SELECT at FROM audit_events WHERE session_id = k.id AND at >= k.since AND event = 'cancelled'
      AND reason = 'user_key' ORDER BY at DESC LIMIT 1) AS "userCancelledAt",
    (SELECT json_array(id, created_at) FROM injections WHERE session_id = k.id AND created_at >= k.since
      AND status IN ('pending', 'sent', 'unknown') ORDER BY created_at DESC LIMIT 1) AS "answeredBy"
  FROM (SELECT ? AS id, ? AS since) AS k
    LEFT JOIN sessions s ON s.session_id = k.id
    LEFT JOIN parks p ON p.session_id = k.id AND p.state = 'parked'
    LEFT JOIN countdowns c ON c.session_id = k.id AND c.state = 'armed'`;

/** A new session's row: its scope, created and updated now. */
const NEW_ROW = {
  sessionId: p("sessionId"),
  directory: p("directory"),
  server: p("server"),
  createdAt: p("now"),
  updatedAt: p("now"),
};

export const SESSIONS = {
  session: ({ db }) => {
    const select = db
      .select()
      .from(sessions)
      .where(eq(sessions.sessionId, p("sessionId")))
      .prepare();
    return (sessionId) => select.get({ sessionId });
  },

  sessionState: ({ raw }) => {
    const select = raw.prepare(SESSION_STATE);
    return (sessionId, idle) => {
      const [{ answeredBy, pending, ...found }] = select.all<{ answeredBy: string | null; pending: number }>(
        sessionId,
        idle?.since ?? null,
      ) as [{ answeredBy: string | null; pending: number }];
      const [answeredId, answeredAt] = answeredBy === null ? [null, null] : (JSON.parse(answeredBy) as unknown[]);
      const { row, columns } = splitStateRow({ ...found, pending: pending === 1, answeredId, answeredAt });
      return sessionStateOf(row as SessionRow | undefined, columns);
    };
  },

  insertSession: ({ db }) => {
    const insert = db.insert(sessions).values(NEW_ROW).onConflictDoNothing().prepare();
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

  // One prepared statement per set of columns written (a handful: the changes' fixed patches), made at its first use.
  upsertSession: ({ db }) => {
    const prepared = new Map<string, { get(values: Record<string, unknown>): SessionRow | undefined }>();
    const prepare = (columns: readonly PatchableColumn[]) =>
      db
        .insert(sessions)
        .values({ ...NEW_ROW, ...Object.fromEntries(columns.map((key) => [key, p(key)])) })
        .onConflictDoUpdate({
          target: sessions.sessionId,
          set: { ...Object.fromEntries(columns.map((key) => [key, ps(key)])), updatedAt: ps("now") },
        })
        .returning()
        .prepare();
    return (scope, update, now) => {
      const columns = patchedColumns(update);
      const key = columns.join(",");
      let upsert = prepared.get(key);
      if (!upsert) prepared.set(key, (upsert = prepare(columns)));
      const values: Record<string, unknown> = { ...scoped(scope), sessionId: scope.sessionId, now };
      for (const column of columns) values[column] = update[column] ?? null;
      const row = upsert.get(values);
      if (!row) throw new Error(`the session row of ${scope.sessionId} was not there right after it was written`);
      return row;
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
