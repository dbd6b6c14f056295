// 2. State changes: one short IMMEDIATE transaction per change (arm, cancel, audit row), against the SQLite floor:
// a raw prepared INSERT (autocommit) on the same file, through the same driver, measured in the same run.
import { openStore } from "../src/store/open.js";
import { Repository, type NewCountdown } from "../src/store/repository.js";
import { nsPerCall, runtime, scratch, type Figure } from "./lib.js";

async function rawInsert(db: string): Promise<{ run: () => void; close: () => void }> {
  const sql =
    "INSERT INTO audit_events (at, session_id, directory, event, reason, detail) VALUES (?, ?, '/bench', 'skipped', 'no_todos', '{}')";
  if (runtime.startsWith("bun")) {
    const { Database } = await import("bun:sqlite");
    const client = new Database(db);
    client.exec("PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL");
    const statement = client.query(sql);
    let i = 0;
    return { run: () => void statement.run(i++, "ses_floor"), close: () => client.close() };
  }
  const { default: BetterSqlite } = await import("better-sqlite3");
  const client = new BetterSqlite(db);
  client.pragma("busy_timeout = 5000");
  client.pragma("synchronous = NORMAL");
  const statement = client.prepare(sql);
  let i = 0;
  return { run: () => void statement.run(i++, "ses_floor"), close: () => client.close() };
}

export async function stateChanges(): Promise<Figure[]> {
  const { db, cleanup } = scratch();
  const store = await openStore(db);
  const repo = new Repository(store);
  const floor = await rawInsert(db);
  let n = 0;
  const armed: NewCountdown[] = [];
  const countdown = (): NewCountdown => {
    const now = Date.now();
    const id = `cd_bench_${n++}`;
    return {
      id,
      sessionId: `ses_${id}`,
      directory: "/bench",
      armedAt: now,
      deadlineAt: now + 2000,
      owner: "bench",
      leaseUntil: now + 15_000,
      attempt: 0,
      todosOpen: 2,
      todosTotal: 3,
    };
  };
  // Enough countdowns armed beforehand for every cancel the benchmark may do, and sessions that already have a row
  // (as they do when a session goes idle again) for every arm.
  store.raw.immediate(() => {
    for (let i = 0; i < 40_000; i++) {
      const c = countdown();
      repo.armCountdown(c);
      armed.push(c);
    }
    const now = Date.now();
    for (let i = 0; i < 200_000; i++)
      store.raw.run(
        "INSERT INTO sessions (session_id, directory, created_at, updated_at) VALUES (?, '/bench', ?, ?)",
        `ses_cd_bench_${n + i}`,
        now,
        now,
      );
  });
  let cancelled = 0;
  const results = await nsPerCall(
    {
      "raw prepared INSERT (floor)": floor.run,
      "arm a countdown": () => repo.armCountdown(countdown(), { trigger: "bench" }),
      "cancel a countdown": () => {
        const c = armed[cancelled++ % armed.length]!;
        repo.endCountdown(c, "cancelled", "user_message", Date.now(), { event: "cancelled", reason: "user_message" });
      },
      "audit row": () =>
        repo.audit(
          Date.now(),
          { sessionId: "ses_a", directory: "/bench" },
          { event: "skipped", reason: "todos_complete", detail: { stage: "idle" } },
        ),
    },
    { batch: 50, timeMs: 800 },
  );
  floor.close();
  store.close();
  cleanup();
  const f = results["raw prepared INSERT (floor)"]!.median;
  const group = `state changes (${runtime})`;
  const row = (name: string, key: string, target?: number): Figure => {
    const m = results[key]!;
    return {
      group,
      name,
      median: m.median / 1000,
      low: m.p25 / 1000,
      high: m.p75 / 1000,
      unit: "µs",
      ratio: { of: "raw INSERT", value: m.median / f },
      target: target ? `≤ ${target}× raw INSERT` : undefined,
      met: target ? m.median / f <= target : undefined,
    };
  };
  return [
    {
      group,
      name: "raw prepared INSERT, autocommit (floor)",
      median: f / 1000,
      low: results["raw prepared INSERT (floor)"]!.p25 / 1000,
      high: results["raw prepared INSERT (floor)"]!.p75 / 1000,
      unit: "µs",
    },
    row("arm a countdown (transaction + audit)", "arm a countdown", 3),
    row("cancel a countdown (transaction + audit)", "cancel a countdown", 3),
    row("one audit row", "audit row"),
  ];
}
