// The countdowns on PostgreSQL: arming, ending and firing one, and the leases their owners hold. A countdown's row and
// its audit row are one statement (a data-modifying WITH). Liveness is a heartbeat by the database's clock, never a
// host's.
import { ownerMayBeAlive } from "../../owner.js";
import type { CountdownRow } from "../../schema.js";
import { scopesAsJson } from "../../statements.js";
import type { ArmedRef } from "../../types.js";
import { whole } from "../rows.js";
import { countdowns } from "../schema.js";
import {
  AUDIT_COLUMNS,
  auditParams,
  auditValues,
  FRESH,
  IN_SCOPES,
  REQUIRED,
  scoped,
  selectList,
  type SomePg,
} from "./statement.js";

const COUNTDOWN = selectList(countdowns);

export const COUNTDOWNS = {
  countdown: {
    sql: `SELECT ${COUNTDOWN} FROM countdowns WHERE id = $1 LIMIT 1`,
    async run(c, id) {
      return whole(await c.rows<CountdownRow>([id]), REQUIRED.countdown)[0];
    },
  },

  armedFor: {
    sql: `SELECT id, owner, lease_until::float8 AS "leaseUntil" FROM countdowns
      WHERE session_id = $1 AND state = 'armed' LIMIT 1`,
    async run(c, sessionId) {
      return whole(await c.rows<ArmedRef>([sessionId]), ["id"])[0];
    },
  },

  armedIn: {
    sql: `SELECT ${COUNTDOWN} FROM countdowns
      WHERE state = 'armed' AND directory = $1 AND server IS NOT DISTINCT FROM $2 ORDER BY deadline_at`,
    async run(c, scope) {
      return whole(await c.rows<CountdownRow>(scoped(scope)), REQUIRED.countdown);
    },
  },

  armedInScopes: {
    sql: `SELECT ${COUNTDOWN} FROM countdowns WHERE state = 'armed' AND ${IN_SCOPES} ORDER BY deadline_at`,
    async run(c, scopes) {
      return whole(await c.rows<CountdownRow>([scopesAsJson(scopes)]), REQUIRED.countdown);
    },
  },

  /**
   * Read now, from its heartbeat: the cached view of the replicas is a tick old, and a replica that started meanwhile
   * would look dead and lose its countdown. A pid of this very host that is gone is gone whatever its heartbeat says.
   */
  ownerAlive: {
    sql: `SELECT 1 AS fresh FROM replicas WHERE id = $1 AND ${FRESH}`,
    async run(c, owner) {
      if (owner === null) return false;
      const fresh = whole(await c.rows<{ fresh: number }>([owner]), ["fresh"]).length > 0;
      c.liveOwners.looked(owner, fresh);
      return fresh && ownerMayBeAlive(owner);
    },
  },

  insertCountdown: {
    sql: `WITH armed AS (
        INSERT INTO countdowns (id, session_id, directory, server, armed_at, deadline_at, state, owner, lease_until,
                                attempt, todos_open, todos_total)
        VALUES ($1, $2, $3, $4, $5, $6, 'armed', $7, $8, $9, $10, $11)
        RETURNING id)
      INSERT INTO ${AUDIT_COLUMNS} SELECT ${auditValues(12)} FROM armed`,
    async run(c, d, armed) {
      await c.rows([
        d.id,
        d.sessionId,
        d.directory,
        d.server ?? null,
        d.armedAt,
        d.deadlineAt,
        d.owner,
        d.leaseUntil,
        d.attempt,
        d.todosOpen,
        d.todosTotal,
        ...auditParams(armed),
      ]);
    },
  },

  endCountdown: {
    sql: `WITH ended AS (
        UPDATE countdowns SET state = $2, ended_at = $4, end_reason = $3, lease_until = NULL
        WHERE id = $1 AND state = 'armed'
        RETURNING id)
      INSERT INTO ${AUDIT_COLUMNS} SELECT ${auditValues(5)} FROM ended RETURNING id`,
    async run(c, id, state, reason, now, audit) {
      return whole(await c.rows<{ id: unknown }>([id, state, reason, now, ...auditParams(audit)]), ["id"]).length > 0;
    },
  },

  // Fenced: only an owner whose heartbeat the database still counts as fresh may fire.
  claimCountdown: {
    sql: `UPDATE countdowns SET state = 'fired', ended_at = $3, end_reason = NULL, lease_until = NULL
      WHERE id = $1 AND state = 'armed' AND owner = $2
        AND EXISTS (SELECT 1 FROM replicas WHERE replicas.id = $2 AND ${FRESH})
      RETURNING id`,
    async run(c, id, owner, now) {
      return whole(await c.rows<{ id: string }>([id, owner, now]), ["id"]).length > 0;
    },
  },

  // Rows another replica is taking over right now are skipped, not waited for: it will take them.
  // The ids as one JSON array: a recovery takes thousands of countdowns over, and a round trip each cost more than
  // the work itself. Bound as text (Bun's client would send a string bound as jsonb as a JSON string).
  takeOver: {
    sql: `WITH free AS (
        SELECT id FROM countdowns
        WHERE id IN (SELECT jsonb_array_elements_text($1::text::jsonb)) AND state = 'armed'
          AND owner IS NOT DISTINCT FROM $2
        FOR UPDATE SKIP LOCKED)
      UPDATE countdowns SET owner = $3, lease_until = $4 FROM free WHERE countdowns.id = free.id
      RETURNING countdowns.id`,
    async run(c, ids, expected, owner, leaseUntil) {
      const rows = await c.rows<{ id: string }>([JSON.stringify(ids), expected, owner, leaseUntil]);
      return whole(rows, ["id"]).map(({ id }) => id);
    },
  },

  expireOrphans: {
    sql: `WITH gone AS (
        SELECT id FROM countdowns
        WHERE id IN (SELECT jsonb_array_elements_text($1::text::jsonb)) AND state = 'armed'
          AND owner IS NOT DISTINCT FROM $2
        FOR UPDATE SKIP LOCKED)
      UPDATE countdowns SET state = 'expired', ended_at = $4, end_reason = $3, lease_until = NULL
      FROM gone WHERE countdowns.id = gone.id RETURNING countdowns.id`,
    async run(c, ids, expected, reason, now) {
      const rows = await c.rows<{ id: string }>([JSON.stringify(ids), expected, reason, now]);
      return whole(rows, ["id"]).map(({ id }) => id);
    },
  },

  renewLeases: {
    sql: `WITH renewed AS (UPDATE countdowns SET lease_until = $2 WHERE owner = $1 AND state = 'armed' RETURNING 1)
      SELECT count(*)::int AS n FROM renewed`,
    async run(c, owner, leaseUntil) {
      return Number(whole(await c.rows<{ n: number }>([owner, leaseUntil]), ["n"])[0]?.n ?? 0);
    },
  },

  releaseLeases: {
    sql: `WITH released AS (
        UPDATE countdowns SET owner = NULL, lease_until = NULL
        WHERE owner = $2 AND state = 'armed' AND ${IN_SCOPES} RETURNING 1)
      SELECT count(*)::int AS n FROM released`,
    async run(c, owner, scopes) {
      return Number(whole(await c.rows<{ n: number }>([scopesAsJson(scopes), owner]), ["n"])[0]?.n ?? 0);
    },
  },
} satisfies SomePg;
