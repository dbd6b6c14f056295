// 1. The hot path: one message.part.delta / message.part.updated through the real plugin hooks, with no countdown
// armed and with one armed for another session, against a no-op handler called the same way (the floor); and the
// SQL statements those events run (goal: none).
import type { PluginInput } from "@opencode-ai/plugin";
import { resolveConfig } from "../src/config.js";
import { pluginHooks } from "../src/plugin/plugin.js";
import { openStore } from "../src/store/sqlite/open.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { FakeHost } from "../test/support/fake-host.js";
import { nsPerCall, runtime, scratch, sleep, type Figure } from "./lib.js";

export async function hotPath(): Promise<Figure[]> {
  const { db, cleanup } = scratch();
  let statements = 0;
  const store = await openStore(db, { onStatement: () => statements++ });
  const host = new FakeHost();
  host.setTodos("ses_armed", [["a", "pending"]]);
  const config = { ...resolveConfig({}, {}), databasePath: db, countdownSeconds: 3600, toast: false };
  const hooks = pluginHooks(
    { directory: "/bench", client: {} } as unknown as PluginInput,
    config,
    new SqliteStore(store),
    host as never,
  );
  const event = hooks.event as unknown as (input: { event: unknown }) => void;
  const noop = (_input: { event: unknown }) => {};
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

  const idle = await nsPerCall({
    "no-op handler (floor)": () => noop(delta),
    "delta, nothing armed": () => event(delta),
    "part.updated, nothing armed": () => event(part),
  });
  // Arm a countdown for another session, then stream again.
  event({ event: { type: "session.idle", properties: { sessionID: "ses_armed" } } });
  await sleep(200);
  if (store.raw.all<{ n: number }>("SELECT count(*) AS n FROM countdowns WHERE state = 'armed'")[0]!.n !== 1)
    throw new Error("no countdown armed");
  const armed = await nsPerCall({
    "no-op handler (floor)": () => noop(delta),
    "delta, armed elsewhere": () => event(delta),
    "part.updated, armed elsewhere": () => event(part),
  });
  statements = 0;
  for (let i = 0; i < 50_000; i++) {
    event(delta);
    event(part);
  }
  const sqlPer100k = statements;
  await hooks.dispose!();
  store.close();
  cleanup();

  const floor = idle["no-op handler (floor)"]!.median;
  const floorArmed = armed["no-op handler (floor)"]!.median;
  const row = (name: string, m: { median: number; p25: number; p75: number }, f: number, target?: string): Figure => ({
    group: `hot path (${runtime})`,
    name,
    median: m.median,
    low: m.p25,
    high: m.p75,
    unit: "ns/event",
    ratio: { of: "no-op floor", value: m.median / f },
    target,
    met: target ? m.median / f <= 2 : undefined,
  });
  const figures: Figure[] = [
    {
      group: `hot path (${runtime})`,
      name: "no-op handler (floor)",
      median: floor,
      low: idle["no-op handler (floor)"]!.p25,
      high: idle["no-op handler (floor)"]!.p75,
      unit: "ns/event",
    },
    row("delta, nothing armed", idle["delta, nothing armed"]!, floor, "≤ 2× floor"),
    row("part.updated, nothing armed", idle["part.updated, nothing armed"]!, floor, "≤ 2× floor"),
    row("delta, countdown armed elsewhere", armed["delta, armed elsewhere"]!, floorArmed),
    row("part.updated, countdown armed elsewhere", armed["part.updated, armed elsewhere"]!, floorArmed),
  ];
  if (!runtime.startsWith("bun")) {
    figures.push({
      group: `hot path (${runtime})`,
      name: "SQL statements per 100k streaming events",
      median: sqlPer100k,
      unit: "statements",
      target: "0",
      met: sqlPer100k === 0,
    });
  }
  return figures;
}
