// The parks on PostgreSQL: parking a session, parking it again in place, ending a park, and the parks a scope holds and
// those due. A park's row and its audit row are one statement (a data-modifying WITH); every write names the state it
// expects (`parked`), so that of two writers only one changes a park.
import type { ParkRow } from "../../schema.js";
import { scopesAsJson } from "../../statements.js";
import { whole } from "../rows.js";
import { parks } from "../schema.js";
import {
  AUDIT_COLUMNS,
  auditParams,
  auditValues,
  IN_SCOPES,
  REQUIRED,
  scoped,
  selectList,
  type SomePg,
} from "./statement.js";

const PARK = selectList(parks);
/** Its wake time or its next check comes by the bound time. */
const due = (n: number) => `(wake_at <= $${n} OR next_check_at <= $${n})`;
/** Whichever of its wake time and its next check comes first (LEAST passes over a null). */
const FIRST_DUE = "LEAST(wake_at, next_check_at), id";

export const PARKS = {
  parkOf: {
    sql: `SELECT ${PARK} FROM parks WHERE session_id = $1 AND state = 'parked' LIMIT 1`,
    async run(c, sessionId) {
      return whole(await c.rows<ParkRow>([sessionId]), REQUIRED.park)[0];
    },
  },

  lastParkOf: {
    sql: `SELECT ${PARK} FROM parks WHERE session_id = $1 ORDER BY parked_at DESC, id DESC LIMIT 1`,
    async run(c, sessionId) {
      return whole(await c.rows<ParkRow>([sessionId]), REQUIRED.park)[0];
    },
  },

  insertPark: {
    sql: `WITH parked AS (
        INSERT INTO parks (id, session_id, directory, server, reason, state, parked_at, wake_at, since, backoff_ms,
                           check_command, check_every_ms, check_runs, next_check_at, detail)
        VALUES ($1, $2, $3, $4, $5, 'parked', $6, $7, $8, $9, $10, $11, $12, $13, $14)
        ON CONFLICT DO NOTHING
        RETURNING id)
      INSERT INTO ${AUDIT_COLUMNS} SELECT ${auditValues(15)} FROM parked RETURNING id`,
    async run(c, d, parked) {
      const audited = await c.rows<{ id: unknown }>([
        d.id,
        d.sessionId,
        d.directory,
        d.server ?? null,
        d.reason,
        d.parkedAt,
        d.wakeAt,
        d.since,
        d.backoffMs,
        d.checkCommand,
        d.checkEveryMs,
        d.checkRuns,
        d.nextCheckAt,
        d.detail,
        ...auditParams(parked),
      ]);
      return whole(audited, ["id"]).length > 0;
    },
  },

  endPark: {
    sql: `UPDATE parks SET state = $2, ended_at = $4, end_reason = $3, lease_until = NULL
      WHERE session_id = $1 AND state = 'parked' AND ($5::bigint IS NULL OR wake_at <= $5)
        AND (NOT $6::boolean OR check_command IS NOT NULL) AND ($7::text IS NULL OR reason = $7)
      RETURNING ${PARK}`,
    async run(c, sessionId, state, reason, now, { dueBy, withCheck, reason: only }) {
      const params = [sessionId, state, reason, now, dueBy ?? null, withCheck ?? false, only ?? null];
      return whole(await c.rows<ParkRow>(params), REQUIRED.park)[0];
    },
  },

  reparkPark: {
    sql: `WITH reparked AS (
        UPDATE parks SET reason = $2, parked_at = $3, wake_at = $4, backoff_ms = $5, check_command = $6,
          check_every_ms = $7, check_runs = $8, next_check_at = $9, detail = $10, check_output = NULL
        WHERE id = $1 AND state = 'parked'
        RETURNING id)
      INSERT INTO ${AUDIT_COLUMNS} SELECT ${auditValues(11)} FROM reparked RETURNING id`,
    async run(c, id, t, parked) {
      const terms = [
        t.reason,
        t.parkedAt,
        t.wakeAt,
        t.backoffMs,
        t.checkCommand,
        t.checkEveryMs,
        t.checkRuns,
        t.nextCheckAt,
        t.detail,
      ];
      return whole(await c.rows<{ id: unknown }>([id, ...terms, ...auditParams(parked)]), ["id"]).length > 0;
    },
  },

  claimCheck: {
    sql: `UPDATE parks SET check_runs = check_runs + 1, next_check_at = $3
      WHERE id = $1 AND state = 'parked' AND check_runs = $2 RETURNING id`,
    async run(c, id, runs, nextCheckAt) {
      return whole(await c.rows<{ id: unknown }>([id, runs, nextCheckAt]), ["id"]).length === 1;
    },
  },

  recordCheckOutput: {
    sql: `UPDATE parks SET check_output = $2 WHERE id = $1 AND state = 'parked' RETURNING id`,
    async run(c, id, output) {
      return whole(await c.rows<{ id: unknown }>([id, output]), ["id"]).length === 1;
    },
  },

  parksDueIn: {
    sql: `SELECT ${PARK} FROM parks
      WHERE state = 'parked' AND directory = $1 AND server IS NOT DISTINCT FROM $2 AND ${due(3)} ORDER BY ${FIRST_DUE}`,
    async run(c, scope, dueBy) {
      return whole(await c.rows<ParkRow>([...scoped(scope), dueBy]), REQUIRED.park);
    },
  },

  parksDueInScopes: {
    sql: `SELECT ${PARK} FROM parks WHERE state = 'parked' AND ${IN_SCOPES} AND ${due(2)} ORDER BY ${FIRST_DUE}`,
    async run(c, scopes, dueBy) {
      return whole(await c.rows<ParkRow>([scopesAsJson(scopes), dueBy]), REQUIRED.park);
    },
  },

  countParked: {
    sql: `SELECT count(*)::int AS n FROM parks WHERE state = 'parked'`,
    async run(c) {
      return Number(whole(await c.rows<{ n: unknown }>([]), ["n"])[0]?.n ?? 0);
    },
  },

  parkedIn: {
    sql: `SELECT ${PARK} FROM parks
      WHERE state = 'parked' AND directory = $1 AND server IS NOT DISTINCT FROM $2 ORDER BY wake_at, id`,
    async run(c, scope) {
      return whole(await c.rows<ParkRow>(scoped(scope)), REQUIRED.park);
    },
  },
} satisfies SomePg;
