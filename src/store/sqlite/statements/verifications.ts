// The runs of the `verify` command on SQLite: one started (with its audit row), one ended, and a session's latest.
// Every write names the state it expects (`running`), so that of two writers only one changes a run.
import { and, asc, desc, eq, sql } from "drizzle-orm";
import { verifications } from "../../schema.js";
import { changes, inScope, p, placeholders, ps, scoped, type SomePrepared } from "./prepare.js";

// Written into the SQL, never bound: the value verifications_one_running_per_session names.
const isRunning = sql`${verifications.state} = 'running'`;
const latestFirst = [desc(verifications.startedAt), desc(verifications.id)];

export const VERIFICATIONS = {
  insertVerification: ({ db, statements }) => {
    const insert = db
      .insert(verifications)
      .values({
        ...placeholders(
          "id",
          "sessionId",
          "directory",
          "server",
          "command",
          "afterContinuations",
          "startedAt",
          "ledgerHash",
          "owner",
          "leaseUntil",
        ),
        state: "running",
      })
      .onConflictDoNothing()
      .prepare();
    return (run, started) => {
      if (changes(insert.run({ ...run, server: run.server ?? null })) === 0) return false;
      statements.audit(started);
      return true;
    };
  },

  endVerification: ({ db }) => {
    const update = db
      .update(verifications)
      .set({
        state: ps("state"),
        endedAt: ps("endedAt"),
        exitCode: ps("exitCode"),
        durationMs: ps("durationMs"),
        outputTail: ps("outputTail"),
        outputHash: ps("outputHash"),
        failures: ps("failures"),
        repeated: ps("repeated"),
        leaseUntil: null,
      })
      .where(
        and(
          eq(verifications.id, p("id")),
          isRunning,
          sql`(${p("owner")} IS NULL OR ${verifications.owner} = ${p("owner")})`,
        ),
      )
      .prepare();
    return (id, owner, end) => changes(update.run({ id, owner, ...end, repeated: end.repeated ? 1 : 0 })) > 0;
  },

  latestVerification: ({ db }) => {
    const select = db
      .select()
      .from(verifications)
      .where(eq(verifications.sessionId, p("sessionId")))
      .orderBy(...latestFirst)
      .limit(1)
      .prepare();
    return (sessionId) => select.get({ sessionId });
  },

  latestFailedVerification: ({ db }) => {
    const select = db
      .select()
      .from(verifications)
      .where(and(eq(verifications.sessionId, p("sessionId")), sql`${verifications.state} = 'failed'`))
      .orderBy(...latestFirst)
      .limit(1)
      .prepare();
    return (sessionId) => select.get({ sessionId });
  },

  runningVerificationsIn: ({ db }) => {
    const select = db
      .select()
      .from(verifications)
      .where(and(isRunning, inScope(verifications)))
      .orderBy(asc(verifications.startedAt))
      .prepare();
    return (scope) => select.all(scoped(scope));
  },

  renewVerification: ({ db }) => {
    const update = db
      .update(verifications)
      .set({ leaseUntil: ps("leaseUntil") })
      .where(and(eq(verifications.id, p("id")), isRunning, eq(verifications.owner, p("owner"))))
      .prepare();
    return (id, owner, leaseUntil) => changes(update.run({ id, owner, leaseUntil })) > 0;
  },
} satisfies SomePrepared;
