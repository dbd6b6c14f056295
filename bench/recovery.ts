// 4. Restart recovery: from opening the file to every armed countdown classified (re-armed, fired or expired) with
// N armed rows and a million audit rows already in the file.
import { resolveConfig } from "../src/config.js";
import { Enforcer } from "../src/engine/enforcer.js";
import { openStore } from "../src/store/sqlite/open.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { FakeHost } from "../test/support/fake-host.js";
import { scratch, type Figure } from "./lib.js";

async function populate(db: string, armed: number, auditRows: number): Promise<void> {
  const store = await openStore(db);
  const now = Date.now();
  store.raw.exec("BEGIN");
  for (let i = 0; i < auditRows; i++) {
    store.raw.run(
      "INSERT INTO audit_events (at, session_id, directory, event, reason, detail) VALUES (?, ?, '/bench', 'skipped', 'todos_complete', '{\"stage\":\"idle\"}')",
      now - 1000 - i,
      `ses_old_${i % 10_000}`,
    );
  }
  for (let i = 0; i < armed; i++) {
    // A third still ahead, a third slightly overdue, a third stale: every branch of the misfire policy.
    const deadline = i % 3 === 0 ? now + 600_000 : i % 3 === 1 ? now - 5_000 : now - 3_600_000;
    store.raw.run(
      "INSERT INTO countdowns (id, session_id, directory, armed_at, deadline_at, state, owner, lease_until, attempt) VALUES (?, ?, '/bench', ?, ?, 'armed', NULL, NULL, 0)",
      `cd_${i}`,
      `ses_${i}`,
      deadline - 2000,
      deadline,
    );
  }
  store.raw.exec("COMMIT");
  store.raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  store.close();
}

export async function recovery(armed: number, auditRows = 1_000_000): Promise<Figure[]> {
  const { db, cleanup } = scratch();
  await populate(db, armed, auditRows);
  const host = new FakeHost();
  const started = performance.now();
  const store = await openStore(db);
  const enforcer = new Enforcer({
    config: { ...resolveConfig({}, {}), databasePath: db, toast: false, countdownSeconds: 2 },
    store: new SqliteStore(store),
    host,
    directory: "/bench",
  });
  const report = await enforcer.start();
  const elapsed = performance.now() - started;
  const classified = report.rearmed + report.fired + report.expired;
  await enforcer.dispose();
  store.close();
  cleanup();
  if (classified !== armed) throw new Error(`recovered ${classified} of ${armed}`);
  const target = armed >= 100_000 ? 2000 : 250;
  return [
    {
      group: "restart recovery",
      name: `${armed.toLocaleString("en")} armed + ${auditRows.toLocaleString("en")} audit rows`,
      median: elapsed,
      unit: "ms",
      target: `≤ ${target} ms`,
      met: elapsed <= target,
      note: `${report.rearmed} re-armed, ${report.fired} fired, ${report.expired} expired`,
    },
  ];
}
