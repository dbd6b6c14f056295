// 1. The hot path: one message.part.delta / message.part.updated through the real plugin hooks, with no countdown
// armed and with one armed for another session, against a no-op hook called the same way (the floor), measured
// interleaved with it (see lib.ts `interleaved`); and the SQL statements those events run (goal: none).
import type { PluginInput } from "@opencode-ai/plugin";
import { resolveConfig } from "../src/config/resolve.js";
import { pluginHooks } from "../src/plugin/plugin.js";
import { openSqlite } from "../src/store/sqlite/open.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { Metrics } from "../src/service/metrics.js";
import { observeStore } from "../src/service/observed-store.js";
import { FakeHost } from "../test/support/fake-host.js";
import { interleaved, ratioOf, runtime, scratch, sleep, type Figure, type Sampled } from "./lib.js";

type Hook = (input: { event: unknown }) => void;

/**
 * Calls per batch: at 2–20 ns a call, 0.2–2 ms a batch, far above the timer's resolution and short enough that most
 * batches run without being preempted (the median then ignores the ones that were).
 */
const BATCH = 100_000;
const ROUNDS = 100;
/** Three million calls of each task before measuring: the JIT's last tier is reached by then, for every task alike. */
const WARMUP_ROUNDS = 30;

/** Where the floor leaves what it read: a store to an object the JIT cannot prove is never read. */
const sink: { seen: unknown } = { seen: undefined };
/**
 * The floor: a hook that takes the event out of its input and reads its type, the least any event hook does (the
 * plugin's own first steps), and keeps it where the JIT cannot prove it unused: an empty function may be compiled
 * away in a loop of a hundred thousand calls, and the ratio would then be against nothing.
 */
const noop: Hook = ({ event }) => {
  sink.seen = (event as { type?: unknown }).type;
};

/**
 * Both hooks called out of line, as OpenCode calls a plugin's hook. Without this, JavaScriptCore's optimising tier
 * inlines the floor into the benchmark's loop to a different degree from one run to the next (steady-state floors
 * from 0.8 to 2.5 ns between runs), which makes the ratio a measure of that choice; marked `noInline`, the floor is
 * 2.4–2.5 ns in every run. What the plugin's hook calls may still be inlined into it. V8 does not inline either hook
 * into the loop here (checked with `--trace-turbo-inlining`), so Node needs nothing.
 */
async function outOfLine(...hooks: Hook[]): Promise<void> {
  if (!runtime.startsWith("bun")) return;
  const jsc = (await import("bun:jsc")) as unknown as { noInline(f: Hook): void };
  for (const hook of hooks) jsc.noInline(hook);
}

export async function hotPath(): Promise<Figure[]> {
  const { db, cleanup } = scratch();
  let statements = 0;
  const store = await openSqlite(db, { onStatement: () => statements++ });
  const host = new FakeHost();
  host.setTodos("ses_armed", [["a", "pending"]]);
  const config = { ...resolveConfig({}, {}), databasePath: db, countdownSeconds: 3600, toast: false };
  const hooks = pluginHooks(
    { directory: "/bench", client: {} } as unknown as PluginInput,
    config,
    new SqliteStore(store),
    host as never,
  );
  const event = hooks.event as unknown as Hook;
  await outOfLine(noop, event);
  const delta = {
    event: {
      type: "message.part.delta",
      properties: { sessionID: "ses_stream", messageID: "msg_a", partID: "prt_a", field: "text", delta: "tok" },
    },
  };
  const part = {
    event: {
      type: "message.part.updated",
      properties: {
        sessionID: "ses_stream",
        part: { id: "prt_a", sessionID: "ses_stream", messageID: "msg_a", type: "text", text: "…" },
        time: 1,
      },
    },
  };
  await sleep(20);
  const options = { rounds: ROUNDS, batch: BATCH, warmupRounds: WARMUP_ROUNDS };

  const idle = await interleaved(
    {
      floor: () => noop(delta),
      delta: () => event(delta),
      part: () => event(part),
    },
    options,
  );
  // The same engine on the store the service runs with `--listen`: each state change timed and counted.
  const metricsHooks = pluginHooks(
    { directory: "/bench-metrics", client: {} } as unknown as PluginInput,
    config,
    observeStore(new SqliteStore(store), new Metrics(() => ({ armed: 0, paused: 0, serversFollowed: 0 }))),
    host as never,
  );
  const metricsEvent = metricsHooks.event as unknown as Hook;
  await outOfLine(metricsEvent);
  const withMetrics = await interleaved(
    {
      floor: () => noop(delta),
      delta: () => metricsEvent(delta),
      part: () => metricsEvent(part),
    },
    options,
  );
  // Arm a countdown for another session, then stream again.
  event({ event: { type: "session.idle", properties: { sessionID: "ses_armed" } } });
  await sleep(200);
  if (store.raw.all<{ n: number }>("SELECT count(*) AS n FROM countdowns WHERE state = 'armed'")[0]!.n !== 1)
    throw new Error("no countdown armed");
  const armed = await interleaved(
    {
      floor: () => noop(delta),
      delta: () => event(delta),
      part: () => event(part),
    },
    options,
  );
  statements = 0;
  for (let i = 0; i < 50_000; i++) {
    event(delta);
    event(part);
  }
  const sqlPer100k = statements;
  await metricsHooks.dispose!();
  await hooks.dispose!();
  store.close();
  cleanup();

  const group = `hot path (${runtime})`;
  const ns = (m: Sampled) => ({ median: m.median, low: m.p25, high: m.p75, unit: "ns/event" });
  const row = (name: string, m: Sampled, floor: Sampled, target?: number): Figure => {
    const ratio = ratioOf(m, floor);
    return {
      group,
      name,
      ...ns(m),
      ratio: { of: "no-op floor", value: ratio },
      ...(target === undefined ? {} : { target: `≤ ${target}× floor`, met: ratio <= target }),
    };
  };
  const figures: Figure[] = [
    { group, name: "no-op hook (floor)", ...ns(idle.floor!) },
    row("delta, nothing armed", idle.delta!, idle.floor!, 2),
    row("part.updated, nothing armed", idle.part!, idle.floor!, 2),
    row("delta, nothing armed, the service's metrics on", withMetrics.delta!, withMetrics.floor!, 2),
    row("part.updated, nothing armed, the service's metrics on", withMetrics.part!, withMetrics.floor!, 2),
    row("delta, countdown armed elsewhere", armed.delta!, armed.floor!),
    row("part.updated, countdown armed elsewhere", armed.part!, armed.floor!),
  ];
  if (!runtime.startsWith("bun")) {
    figures.push({
      group,
      name: "SQL statements per 100k streaming events",
      median: sqlPer100k,
      unit: "statements",
      target: "0",
      met: sqlPer100k === 0,
    });
  }
  return figures;
}
