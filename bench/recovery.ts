// 4. Restart recovery: from opening the file to every armed countdown classified (re-armed, fired or expired), with
// N armed rows and many audit rows already in the file (and, for one figure, 100,000 parked sessions waiting), against a floor that opens the same file through the same
// driver and writes the same rows raw in one transaction. Measured interleaved: each round runs recovery and the floors
// in an order that rotates from round to round, each run on a fresh copy of the same populated file (not timed).
import { closeSync, copyFileSync, fsyncSync, openSync, rmSync } from "node:fs";
import { join } from "node:path";
import { resolveConfig } from "../src/config/resolve.js";
import { Enforcer } from "../src/engine/enforcer.js";
import { openSqlite } from "../src/store/sqlite/open.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { FakeHost } from "../test/support/fake-host.js";
import { ratioOf, scratch, summarize, type Figure, type Sampled } from "./lib.js";

/** Wide enough that a countdown populated 5 s overdue is still "fire" (not "expire") minutes later, in the last round. */
const RESUME_WINDOW_SECONDS = 600;

/**
 * The rows, written by SQLite itself (a recursive CTE) in one transaction: a million audit rows in a few seconds.
 * `parked` sessions wait on a limit that lifts within the next hour, each with its session row, as a fleet that hit a
 * provider's limit leaves them: what a restart must not read one by one.
 */
async function populate(db: string, armed: number, auditRows: number, parked: number): Promise<void> {
  const store = await openSqlite(db);
  const now = Date.now();
  const series = "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)";
  store.raw.immediate(() => {
    store.raw.run(
      `${series} INSERT INTO audit_events (at, session_id, directory, event, reason, detail)
       SELECT ? - 1000 - i, 'ses_old_' || (i % 10000), '/bench', 'skipped', 'todos_complete', '{"stage":"idle"}' FROM n`,
      auditRows,
      now,
    );
    // A third still ahead, a third slightly overdue, a third stale: every branch of the misfire policy.
    store.raw.run(
      `${series}, d(i, deadline) AS (
         SELECT i, ? + CASE i % 3 WHEN 0 THEN 600000 WHEN 1 THEN -5000 ELSE -3600000 END FROM n)
       INSERT INTO countdowns (id, session_id, directory, armed_at, deadline_at, state, owner, lease_until, attempt)
       SELECT 'cd_' || i, 'ses_' || i, '/bench', deadline - 2000, deadline, 'armed', NULL, NULL, 0 FROM d`,
      armed,
      now,
    );
    if (parked === 0) return;
    store.raw.run(
      `${series} INSERT INTO sessions (session_id, directory, created_at, updated_at) SELECT 'ses_parked_' || i, '/bench', ?, ? FROM n`,
      parked,
      now,
      now,
    );
    store.raw.run(
      `${series} INSERT INTO parks (id, session_id, directory, reason, state, parked_at, wake_at, since, detail)
       SELECT 'park_' || i, 'ses_parked_' || i, '/bench', 'limit', 'parked', ? - 60000, ? + 60000 + (i % 3540) * 1000,
              ? - 60000, '{"resetFrom":{"field":"retry-after"}}' FROM n`,
      parked,
      now,
      now,
      now,
    );
  });
  store.raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  store.close();
}

/** The engine's recovery: open the file, build the enforcer, `start()`; milliseconds until it resolves. */
async function engineRecovery(db: string, armed: number): Promise<number> {
  const config = {
    ...resolveConfig({}, {}),
    databasePath: db,
    toast: false,
    countdownSeconds: 2,
    resumeWindowSeconds: RESUME_WINDOW_SECONDS,
  };
  const started = performance.now();
  const store = await openSqlite(db);
  const enforcer = new Enforcer({ config, store: new SqliteStore(store), host: new FakeHost(), directory: "/bench" });
  const report = await enforcer.start();
  const elapsed = performance.now() - started;
  await enforcer.dispose();
  store.close();
  const classified = report.rearmed + report.fired + report.expired;
  if (classified !== armed) throw new Error(`recovered ${classified} of ${armed}`);
  if (report.rearmed === 0 || report.fired === 0 || report.expired === 0)
    throw new Error(`not every branch of the misfire policy: ${JSON.stringify(report)}`);
  return elapsed;
}

type Statement = { run(...params: unknown[]): unknown; all(...params: unknown[]): unknown[] };

/**
 * The floor: what recovery cannot cost less than. Open the file the same way (`openStore`: the same driver, PRAGMAs
 * and migration check), read the armed rows of the directory, and in one IMMEDIATE transaction give each its final
 * state — this process's lease, or expired — with one audit row, through statements prepared once on that connection.
 * With `takeOver: false`, only the read and the audit rows (no countdown is changed): a lower floor, for comparison.
 */
async function rawRecovery(db: string, armed: number, takeOver: boolean): Promise<number> {
  const started = performance.now();
  const store = await openSqlite(db);
  const client = (store.db as unknown as { $client: { prepare(sql: string): Statement } }).$client;
  const now = Date.now();
  const leaseUntil = now + 15_000;
  const rows = client
    .prepare("SELECT * FROM countdowns WHERE state = 'armed' AND directory = ? ORDER BY deadline_at")
    .all("/bench") as { id: string; session_id: string; owner: string | null; deadline_at: number }[];
  const lease = client.prepare(
    "UPDATE countdowns SET owner = ?, lease_until = ? WHERE id = ? AND state = 'armed' AND owner IS ?",
  );
  const expire = client.prepare(
    "UPDATE countdowns SET state = 'expired', ended_at = ?, end_reason = 'stale_after_restart', lease_until = NULL WHERE id = ? AND state = 'armed'",
  );
  const audit = client.prepare(
    "INSERT INTO audit_events (at, session_id, directory, event, reason, detail) VALUES (?, ?, '/bench', ?, ?, ?)",
  );
  store.raw.immediate(() => {
    for (const row of rows) {
      const lateMs = now - row.deadline_at;
      const expired = lateMs >= RESUME_WINDOW_SECONDS * 1000;
      if (takeOver) {
        if (expired) expire.run(now, row.id);
        else lease.run("bench", leaseUntil, row.id, row.owner);
      }
      const detail = { countdownId: row.id, previousOwner: row.owner, deadlineAt: row.deadline_at, lateMs };
      const [event, reason] = expired ? ["expired", "stale_after_restart"] : ["resumed", "restart"];
      audit.run(now, row.session_id, event, reason, JSON.stringify(detail));
    }
  });
  const elapsed = performance.now() - started;
  store.close();
  if (rows.length !== armed) throw new Error(`floor read ${rows.length} of ${armed}`);
  return elapsed;
}

/**
 * `armed` countdowns and `auditRows` audit rows populated once into a template file; then `rounds` rounds (after one
 * that warms up and is dropped), each timing the engine's recovery and the two floors on fresh copies of the template,
 * in an order that rotates from round to round.
 */
export async function recovery(armed: number, auditRows: number, rounds: number, parked = 0): Promise<Figure[]> {
  const { dir, cleanup } = scratch();
  const template = join(dir, "template.db");
  await populate(template, armed, auditRows, parked);
  const db = join(dir, "state.db");
  const fresh = () => {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(db + suffix, { force: true });
    copyFileSync(template, db);
    // On disk before the clock starts, like the file a restart opens: otherwise the first fsync inside the timed part
    // (the WAL's header, at the first commit) writes out the whole fresh copy, tens of milliseconds charged to
    // whichever of the three runs first writes.
    const fd = openSync(db, "r+");
    fsyncSync(fd);
    closeSync(fd);
  };
  const tasks: Record<string, () => Promise<number>> = {
    recovery: () => engineRecovery(db, armed),
    floor: () => rawRecovery(db, armed, true),
    "read and audit rows only": () => rawRecovery(db, armed, false),
  };
  const names = Object.keys(tasks);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < 1 + rounds; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length]!;
      fresh();
      const ms = await tasks[name]!();
      if (round > 0) samples[name]!.push(ms);
    }
  }
  cleanup();
  const results = Object.fromEntries(names.map((n) => [n, summarize(samples[n]!)])) as Record<string, Sampled>;
  const ms = (m: Sampled) => ({ median: m.median, low: m.p25, high: m.p75, unit: "ms" });
  const group = "restart recovery";
  const waiting = parked > 0 ? ` + ${parked.toLocaleString("en")} parked` : "";
  const size = `${armed.toLocaleString("en")} armed${waiting} + ${auditRows.toLocaleString("en")} audit rows`;
  const ratio = ratioOf(results.recovery!, results.floor!);
  const lower = ratioOf(results.recovery!, results["read and audit rows only"]!);
  return [
    { group, name: `${size}, the same rows raw in one transaction (floor)`, ...ms(results.floor!) },
    {
      group,
      name: `${size}, recovery`,
      ...ms(results.recovery!),
      ratio: { of: "raw floor", value: ratio },
      target: "≤ 2× floor",
      met: ratio <= 2,
      note: `${lower.toFixed(2)}× reading and writing the audit rows only (${results["read and audit rows only"]!.median.toFixed(0)} ms); ${rounds} rounds`,
    },
  ];
}
