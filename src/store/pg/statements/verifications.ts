// The runs of the `verify` command on PostgreSQL: one started (its row and its audit row one statement, a
// data-modifying WITH), one ended, and a session's latest. Every write names the state it expects (`running`), so
// that of two writers only one changes a run.
import type { VerificationRow } from "../../schema.js";
import { whole } from "../rows.js";
import { verifications } from "../schema.js";
import { AUDIT_COLUMNS, auditParams, auditValues, REQUIRED, scoped, selectList, type SomePg } from "./statement.js";

const VERIFICATION = selectList(verifications);
const LATEST_FIRST = "ORDER BY started_at DESC, id DESC LIMIT 1";

export const VERIFICATIONS = {
  insertVerification: {
    sql: `WITH started AS (
        INSERT INTO verifications (id, session_id, directory, server, command, state, after_continuations, started_at,
                                   ledger_hash, owner, lease_until)
        VALUES ($1, $2, $3, $4, $5, 'running', $6, $7, $8, $9, $10)
        ON CONFLICT DO NOTHING
        RETURNING id)
      INSERT INTO ${AUDIT_COLUMNS} SELECT ${auditValues(11)} FROM started RETURNING id`,
    async run(c, v, started) {
      const audited = await c.rows<{ id: unknown }>([
        v.id,
        v.sessionId,
        v.directory,
        v.server ?? null,
        v.command,
        v.afterContinuations,
        v.startedAt,
        v.ledgerHash,
        v.owner,
        v.leaseUntil,
        ...auditParams(started),
      ]);
      return whole(audited, ["id"]).length > 0;
    },
  },

  endVerification: {
    sql: `UPDATE verifications SET state = $3, ended_at = $4, exit_code = $5, duration_ms = $6, output_tail = $7,
        output_hash = $8, failures = $9, repeated = $10, lease_until = NULL
      WHERE id = $1 AND state = 'running' AND ($2::text IS NULL OR owner = $2) RETURNING id`,
    async run(c, id, owner, e) {
      const params = [id, owner, e.state, e.endedAt, e.exitCode, e.durationMs, e.outputTail, e.outputHash, e.failures];
      return whole(await c.rows<{ id: unknown }>([...params, e.repeated]), ["id"]).length > 0;
    },
  },

  latestVerification: {
    sql: `SELECT ${VERIFICATION} FROM verifications WHERE session_id = $1 ${LATEST_FIRST}`,
    async run(c, sessionId) {
      return whole(await c.rows<VerificationRow>([sessionId]), REQUIRED.verification)[0];
    },
  },

  latestFailedVerification: {
    sql: `SELECT ${VERIFICATION} FROM verifications WHERE session_id = $1 AND state = 'failed' ${LATEST_FIRST}`,
    async run(c, sessionId) {
      return whole(await c.rows<VerificationRow>([sessionId]), REQUIRED.verification)[0];
    },
  },

  runningVerificationsIn: {
    sql: `SELECT ${VERIFICATION} FROM verifications
      WHERE state = 'running' AND directory = $1 AND server IS NOT DISTINCT FROM $2 ORDER BY started_at`,
    async run(c, scope) {
      return whole(await c.rows<VerificationRow>(scoped(scope)), REQUIRED.verification);
    },
  },

  renewVerification: {
    sql: `UPDATE verifications SET lease_until = $3 WHERE id = $1 AND state = 'running' AND owner = $2 RETURNING id`,
    async run(c, id, owner, leaseUntil) {
      return whole(await c.rows<{ id: unknown }>([id, owner, leaseUntil]), ["id"]).length > 0;
    },
  },
} satisfies SomePg;
