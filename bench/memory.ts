// 6. Memory: heap and RSS after 100,000 sessions have each gone through a full lifecycle (idle, countdown, fire,
// prompt, sent), and after pruning all that history. Run with --expose-gc (bench/run.ts does).
import { resolveConfig } from "../src/config/resolve.js";
import { Enforcer } from "../src/engine/enforcer.js";
import { openSqlite } from "../src/store/sqlite/open.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { prune } from "../src/store/batches/prune-history.js";
import { FakeHost } from "../test/support/fake-host.js";
import { scratch, sleep, type Figure } from "./lib.js";

const gc = () => {
  for (let i = 0; i < 3; i++) (globalThis as { gc?: () => void }).gc?.();
};
const mb = (bytes: number) => bytes / 1024 / 1024;

export async function memory(lifecycles = 100_000): Promise<Figure[]> {
  if (!(globalThis as { gc?: unknown }).gc) throw new Error("run with --expose-gc");
  const { db, cleanup } = scratch();
  const store = await openSqlite(db);
  const host = new FakeHost();
  // The host forgets what it was told (a real OpenCode keeps it, not this process); like OpenCode, it starts the
  // turn of each prompt it takes (a busy status), which confirms the continuation started.
  host.prompt = async (request) => {
    queueMicrotask(() =>
      enforcer.handleEvent({
        type: "session.status",
        properties: { sessionID: request.sessionId, status: { type: "busy" } },
      }),
    );
  };
  host.getTodos = async () => [{ content: "a", status: "pending" }];
  host.getMessages = async () => [];
  host.log = () => undefined;
  const config = { ...resolveConfig({}, {}), databasePath: db, toast: false, countdownSeconds: 0 };
  const port = new SqliteStore(store);
  const enforcer = new Enforcer({ config, store: port, host, directory: "/bench" });
  await enforcer.start();
  await sleep(50);
  gc();
  const start = process.memoryUsage();
  const wave = 500;
  for (let i = 0; i < lifecycles; i += wave) {
    for (let j = i; j < i + wave; j++)
      enforcer.handleEvent({ type: "session.idle", properties: { sessionID: `ses_${j}` } });
    await enforcer.settled();
    await sleep(1);
    await enforcer.settled();
  }
  const sent = store.raw.all<{ n: number }>("SELECT count(*) AS n FROM injections WHERE status = 'sent'")[0]!.n;
  gc();
  const after = process.memoryUsage();
  const pruned = await prune(port, { cutoff: Date.now() + 1, batchSize: 5000, pauseMs: 0 });
  store.raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  gc();
  const afterPrune = process.memoryUsage();
  await enforcer.dispose();
  store.close();
  cleanup();
  if (sent !== lifecycles) throw new Error(`only ${sent} of ${lifecycles} lifecycles completed`);
  const growth = mb(after.heapUsed - start.heapUsed);
  const back = mb(afterPrune.heapUsed - start.heapUsed);
  return [
    {
      group: "memory",
      name: `heap growth after ${lifecycles.toLocaleString("en")} full lifecycles`,
      median: growth,
      unit: "MB",
      target: "≤ 50 MB",
      met: growth <= 50,
      note: `heap ${mb(start.heapUsed).toFixed(1)} → ${mb(after.heapUsed).toFixed(1)} MB; RSS ${mb(start.rss).toFixed(0)} → ${mb(after.rss).toFixed(0)} MB`,
    },
    {
      group: "memory",
      name: `heap after pruning ${(pruned.auditEvents + pruned.countdowns + pruned.injections).toLocaleString("en")} rows`,
      median: back,
      unit: "MB above start",
      target: "≤ 10 MB",
      met: back <= 10,
      note: `heap ${mb(afterPrune.heapUsed).toFixed(1)} MB; RSS ${mb(afterPrune.rss).toFixed(0)} MB`,
    },
  ];
}

// Run as a process of its own: this file, or the bundle of it that test/crash/processes.ts makes (memory-<hash>.mjs).
if (/\/memory(-[0-9a-f]+\.mjs|\.ts)$/.test(process.argv[1] ?? "")) {
  const figures = await memory(Number(process.env.LIFECYCLES ?? 100_000));
  process.stdout.write(`${JSON.stringify({ figures })}\n`);
}
