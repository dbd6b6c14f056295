// Statement shapes tried under Bun's own SQL client (no bound of the store's): connections the server ends (idle,
// idle in a transaction, in flight, in a pipeline), statement timeouts in a pipeline, the idle timer racing bursts,
// answers carrying NOTICEs among transactions with advisory locks. Each statement's outcome (lost-answer.ts); prints
// one JSON line.
import { SQL } from "bun";
import pg from "pg";
import { outcomeOf } from "../support/lost-answer.js";

const url = process.env.PG_URL!;
const results: Record<string, unknown> = {};
const admin = new pg.Client({ connectionString: url });
await admin.connect();
const kill = (app: string) =>
  admin.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
    [app],
  );

// e1: idle connection killed by the server, then a query
{
  const sql = new SQL(url, { max: 1, idleTimeout: 0, connection: { application_name: "e1" } });
  await sql`SELECT 1`;
  await kill("e1");
  await new Promise((r) => setTimeout(r, 200));
  results.e1_afterIdleKill = await outcomeOf(() => sql`SELECT 1`);
  results.e1_next = await outcomeOf(() => sql`SELECT 1`);
  void sql.close({ timeout: 0.001 });
}
// e2: transaction idle past idle_in_transaction_session_timeout, then a statement
{
  const sql = new SQL(url, {
    max: 1,
    idleTimeout: 0,
    connection: { application_name: "e2", idle_in_transaction_session_timeout: 500 },
  });
  results.e2_idleInTx = await outcomeOf(() =>
    sql.begin(async (tx) => {
      await tx`SELECT 1`;
      await new Promise((r) => setTimeout(r, 1500));
      await tx`SELECT 2`;
    }),
  );
  results.e2_next = await outcomeOf(() => sql`SELECT 1`);
  void sql.close({ timeout: 0.001 });
}
// e3: killed while a query runs
{
  const sql = new SQL(url, { max: 1, idleTimeout: 0, connection: { application_name: "e3" } });
  const running = outcomeOf(() => sql`SELECT pg_sleep(2)`);
  await new Promise((r) => setTimeout(r, 300));
  await kill("e3");
  results.e3_inFlightKill = await running;
  results.e3_next = await outcomeOf(() => sql`SELECT 1`);
  void sql.close({ timeout: 0.001 });
}
// e4: many pipelined queries on one connection, killed in the middle
{
  const sql = new SQL(url, { max: 1, idleTimeout: 0, connection: { application_name: "e4" } });
  await sql`SELECT 1`;
  const many = Array.from({ length: 200 }, (_, i) => outcomeOf(() => sql`SELECT ${i}::int AS n, pg_sleep(0.005)`));
  await new Promise((r) => setTimeout(r, 100));
  await kill("e4");
  const all = await Promise.all(many);
  const tally: Record<string, number> = {};
  for (const o of all) tally[o.settled] = (tally[o.settled] ?? 0) + 1;
  results.e4_pipelinedKill = tally;
  results.e4_next = await outcomeOf(() => sql`SELECT 1`);
  void sql.close({ timeout: 0.001 });
}
// e5: a statement cancelled by statement_timeout inside pipelined traffic
{
  const sql = new SQL(url, { max: 1, idleTimeout: 0, connection: { application_name: "e5", statement_timeout: 200 } });
  const many = Array.from({ length: 50 }, (_, i) =>
    outcomeOf(() => (i % 10 === 5 ? sql`SELECT pg_sleep(1)` : sql`SELECT ${i}::int AS n`)),
  );
  const all = await Promise.all(many);
  const tally: Record<string, number> = {};
  for (const o of all) tally[o.settled] = (tally[o.settled] ?? 0) + 1;
  results.e5_timeoutInPipeline = tally;
  void sql.close({ timeout: 0.001 });
}
// e6: idle timer closing connections while bursts arrive around its expiry
{
  const sql = new SQL(url, { max: 2, idleTimeout: 1, connection: { application_name: "e6" } });
  const tally: Record<string, number> = {};
  for (let round = 0; round < 12; round++) {
    const all = await Promise.all(Array.from({ length: 30 }, (_, i) => outcomeOf(() => sql`SELECT ${i}::int AS n`)));
    for (const o of all) tally[o.settled] = (tally[o.settled] ?? 0) + 1;
    await new Promise((r) => setTimeout(r, 950 + (round % 5) * 25));
  }
  results.e6_idleTimerRace = tally;
  void sql.close({ timeout: 0.001 });
}
// e8: statements whose answers carry a NOTICE, pipelined, with transactions among them
{
  const sql = new SQL(url, { max: 3, idleTimeout: 0, connection: { application_name: "e8" } });
  await sql.unsafe(`CREATE OR REPLACE FUNCTION tc_notice(n int) RETURNS int LANGUAGE plpgsql AS $$
    BEGIN RAISE NOTICE 'n %', n; RETURN n; END $$`);
  const all = await Promise.all(
    Array.from({ length: 600 }, (_, i) =>
      outcomeOf(() =>
        i % 7 === 0
          ? sql.begin(async (tx) => {
              await tx`SELECT pg_advisory_xact_lock(1, ${i % 5})`;
              await tx`SELECT tc_notice(${i})`;
            })
          : sql`SELECT tc_notice(${i})`,
      ),
    ),
  );
  const tally: Record<string, number> = {};
  for (const o of all) tally[o.settled] = (tally[o.settled] ?? 0) + 1;
  results.e8_notices = tally;
  void sql.close({ timeout: 0.001 });
}
await admin.end();
// Exits once the line is written: an exit right after the write can cut a piped line short.
process.stdout.write(`${JSON.stringify({ runtime: `bun ${process.versions.bun}`, results })}\n`, () => process.exit(0));
