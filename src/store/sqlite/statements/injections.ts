// The continuations (injections) on SQLite: recording one before its prompt goes out and what became of it, and the
// reads that tell whether one is pending, answered an idle, or needs a second look.
import { and, asc, desc, eq, gte, inArray } from "drizzle-orm";
import { injections } from "../../schema.js";
import { scopesAsJson } from "../../statements.js";
import { changes, inScope, inScopes, p, placeholders, ps, scoped, type SomePrepared } from "./prepare.js";

const pending = eq(injections.status, "pending");

export const INJECTIONS = {
  injection: ({ db }) => {
    const select = db
      .select()
      .from(injections)
      .where(eq(injections.id, p("id")))
      .prepare();
    return (id) => select.get({ id });
  },

  insertInjection: ({ db }) => {
    const insert = db
      .insert(injections)
      .values({
        ...placeholders("id", "sessionId", "countdownId", "directory", "server", "messageId", "createdAt", "agent"),
        ...placeholders("model", "variant", "todosTotal", "todosOpen", "attempt", "onSent", "owner", "leaseUntil"),
        status: "pending",
        updatedAt: p("createdAt"),
      })
      .prepare();
    return (injection) => void insert.run({ onSent: null, ...injection, server: injection.server ?? null });
  },

  finishInjection: ({ db }) => {
    const update = db
      .update(injections)
      .set({ status: ps("status"), error: ps("error"), updatedAt: ps("now"), leaseUntil: null })
      .where(and(eq(injections.id, p("id")), pending))
      .prepare();
    return (id, status, error, now) => changes(update.run({ id, status, error, now })) > 0;
  },

  confirmInjection: ({ db }) => {
    const update = db
      .update(injections)
      .set({ status: "sent", updatedAt: ps("now"), leaseUntil: null })
      .where(and(eq(injections.id, p("id")), inArray(injections.status, ["failed", "unknown"])))
      .prepare();
    return (id, now) => changes(update.run({ id, now })) > 0;
  },

  // Walks injections_session_idx (session, created_at): the few rows since a look began. One file, one host, one
  // clock: `since` compares with the firing process's time as it is.
  continuedSince: ({ db }) => {
    const select = db
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
      .prepare();
    return (sessionId, since) => select.get({ sessionId, since });
  },

  pendingIn: ({ db }) => {
    const select = db
      .select()
      .from(injections)
      .where(and(pending, inScope(injections)))
      .orderBy(asc(injections.createdAt))
      .prepare();
    return (scope) => select.all(scoped(scope));
  },

  pendingInScopes: ({ db }) => {
    const select = db
      .select()
      .from(injections)
      .where(and(pending, inScopes(injections)))
      .orderBy(asc(injections.createdAt))
      .prepare();
    return (scopes) => select.all({ scopes: scopesAsJson(scopes) });
  },

  uncertainIn: ({ db }) => {
    const select = db
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
      .prepare();
    return (sessionId, since) => select.all({ sessionId, since });
  },
} satisfies SomePrepared;
