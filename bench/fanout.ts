// 5. Fan-out: 1,000 sessions due at the same instant, through a scripted host whose prompt takes 20 ms: total time,
// the peak of prompt calls in flight (bounded by maxConcurrentInjections), and duplicates (must be none).
import { resolveConfig } from "../src/config/resolve.js";
import { Enforcer } from "../src/engine/enforcer.js";
import { openSqlite } from "../src/store/sqlite/open.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { FakeHost } from "../test/support/fake-host.js";
import { scratch, sleep, type Figure } from "./lib.js";

export async function fanout(sessions = 1000, cap = 8, latencyMs = 20): Promise<Figure[]> {
  const { db, cleanup } = scratch();
  const store = await openSqlite(db);
  const host = new FakeHost();
  let inFlight = 0;
  let peak = 0;
  let lastSent = 0;
  const prompt = host.prompt.bind(host);
  host.prompt = async (request, signal) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    try {
      await sleep(latencyMs);
      await prompt(request, signal);
      lastSent = performance.now();
    } finally {
      inFlight--;
    }
  };
  const ids = Array.from({ length: sessions }, (_, i) => `ses_${i}`);
  for (const id of ids) {
    host.setTodos(id, [["a", "pending"]]);
    host.addUserMessage(id, "go");
  }
  const config = {
    ...resolveConfig({}, {}),
    databasePath: db,
    toast: false,
    countdownSeconds: 1,
    maxConcurrentInjections: cap,
  };
  const enforcer = new Enforcer({ config, store: new SqliteStore(store), host, directory: "/bench" });
  await enforcer.start();
  for (const id of ids) enforcer.handleEvent({ type: "session.idle", properties: { sessionID: id } });
  await enforcer.settled();
  const armedRows = store.raw.all<{ deadline_at: number }>("SELECT deadline_at FROM countdowns WHERE state = 'armed'");
  const lastDeadline = Math.max(...armedRows.map((r) => r.deadline_at));
  const dueAt = performance.now() + (lastDeadline - Date.now());
  while (host.prompts.length < sessions) await sleep(20);
  await enforcer.settled();
  const total = lastSent - dueAt;
  const perSession = new Map<string, number>();
  for (const p of host.prompts) perSession.set(p.sessionId, (perSession.get(p.sessionId) ?? 0) + 1);
  const duplicates = [...perSession.values()].filter((n) => n > 1).length;
  await enforcer.dispose();
  store.close();
  cleanup();
  const ideal = (sessions / cap) * latencyMs;
  return [
    {
      group: "fan-out",
      name: `${sessions} sessions due at once, cap ${cap}, ${latencyMs} ms prompts`,
      median: total,
      unit: "ms total",
      ratio: { of: `${sessions}/${cap}×${latencyMs} ms = ${ideal} ms`, value: total / ideal },
      target: "≤ 1.5×, 0 duplicates",
      met: total <= 1.5 * ideal && duplicates === 0,
      note: `peak ${peak} in flight (cap ${cap}), ${duplicates} duplicates, ${host.prompts.length} sent`,
    },
  ];
}
