// The continuations (injections) on PostgreSQL: recording one before its prompt goes out and what became of it, and
// the reads that tell whether one is pending, answered an idle, or needs a second look.
import type { InjectionRow } from "../../schema.js";
import { scopesAsJson } from "../../statements.js";
import type { ContinuationRef } from "../../types.js";
import { whole } from "../rows.js";
import { injections } from "../schema.js";
import { ago, DB_NOW, IN_SCOPES, REQUIRED, scoped, selectList, type SomePg } from "./statement.js";

const INJECTION = selectList(injections);

export const INJECTIONS = {
  injection: {
    sql: `SELECT ${INJECTION} FROM injections WHERE id = $1 LIMIT 1`,
    async run(c, id) {
      return whole(await c.rows<InjectionRow>([id]), REQUIRED.injection)[0];
    },
  },

  insertInjection: {
    sql: `INSERT INTO injections (id, session_id, countdown_id, directory, server, message_id, created_at, status, agent,
        model, variant, todos_total, todos_open, attempt, on_sent, owner, lease_until, updated_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $10, $11, $12, $13, $14, $15, $16, $7)`,
    async run(c, i) {
      await c.rows([
        i.id,
        i.sessionId,
        i.countdownId,
        i.directory,
        i.server ?? null,
        i.messageId,
        i.createdAt,
        i.agent,
        i.model,
        i.variant,
        i.todosTotal,
        i.todosOpen,
        i.attempt,
        i.onSent ?? null,
        i.owner,
        i.leaseUntil,
      ]);
    },
  },

  finishInjection: {
    sql: `UPDATE injections SET status = $2, error = $3, updated_at = $4, lease_until = NULL
      WHERE id = $1 AND status = 'pending' RETURNING id`,
    async run(c, id, status, error, now) {
      return whole(await c.rows<{ id: string }>([id, status, error, now]), ["id"]).length > 0;
    },
  },

  confirmInjection: {
    sql: `UPDATE injections SET status = 'sent', updated_at = $2, lease_until = NULL
      WHERE id = $1 AND status IN ('failed', 'unknown') RETURNING id`,
    async run(c, id, now) {
      return whole(await c.rows<{ id: string }>([id, now]), ["id"]).length > 0;
    },
  },

  // The session's few rows (injections_session_idx), those fired since a look began by the database's clock, as
  // sessionState's.
  continuedSince: {
    sql: `SELECT id AS "injectionId", created_at::float8 AS "firedAt" FROM injections
      WHERE session_id = $1 AND coalesce(db_created_at, created_at) >= ${DB_NOW} - $2::bigint
        AND status IN ('pending', 'sent', 'unknown')
      ORDER BY coalesce(db_created_at, created_at) DESC LIMIT 1`,
    async run(c, sessionId, since, now) {
      return whole(await c.rows<ContinuationRef>([sessionId, ago(since, now)]), ["injectionId", "firedAt"])[0];
    },
  },

  pendingIn: {
    sql: `SELECT ${INJECTION} FROM injections
      WHERE status = 'pending' AND directory = $1 AND server IS NOT DISTINCT FROM $2 ORDER BY created_at`,
    async run(c, scope) {
      return whole(await c.rows<InjectionRow>(scoped(scope)), REQUIRED.injection);
    },
  },

  pendingInScopes: {
    sql: `SELECT ${INJECTION} FROM injections WHERE status = 'pending' AND ${IN_SCOPES} ORDER BY created_at`,
    async run(c, scopes) {
      return whole(await c.rows<InjectionRow>([scopesAsJson(scopes)]), REQUIRED.injection);
    },
  },

  uncertainIn: {
    sql: `SELECT ${INJECTION} FROM injections
      WHERE session_id = $1 AND created_at >= $2 AND status IN ('failed', 'unknown') ORDER BY created_at DESC LIMIT 10`,
    async run(c, sessionId, since) {
      return whole(await c.rows<InjectionRow>([sessionId, since]), REQUIRED.injection);
    },
  },
} satisfies SomePg;
