// Notices: a stop that tells (skip's change with its telling: `notified_stop`, the notice built, one outbox row per
// channel) on a database whose outbox holds notices still pending, against the same stop with no channel configured
// (the toast's `notified_stop` alone), measured interleaved (lib.ts). What the notices add to a stop is the notice's
// body and its rows; the pending ones must not make it dearer (the outbox's indexes are not in a stop's path).
import { skip } from "../src/store/changes/skip.js";
import type { Telling } from "../src/store/changes/tell-stop.js";
import { q, change } from "../src/store/script.js";
import { openSqlite } from "../src/store/sqlite/open.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import type { NewNotice } from "../src/store/types.js";
import { interleaved, ratioOf, runtime, scratch, type Figure, type Sampled } from "./lib.js";

const PENDING = 10_000;
const ALL = ["question", "budget", "stuck", "done", "error"] as const;

export async function notices(): Promise<Figure[]> {
  const { db, cleanup } = scratch();
  const opened = await openSqlite(db);
  const store = new SqliteStore(opened);
  const now = Date.now();
  const pending: NewNotice[] = Array.from({ length: PENDING }, (_, i) => ({
    ...{ id: `ntc_old${i}:hook`, noticeId: `ntc_old${i}`, sessionId: `ses_old${i % 500}`, directory: "/bench" },
    ...{ channel: "hook", kind: "stuck", reason: "stagnation", createdAt: now - i, body: "{}" },
  }));
  await store.change(change("bench", undefined, () => q.insertNotices(pending)));
  if (process.env.X) opened.raw.exec(process.env.X);
  const telling = (channels: Telling["channels"]): Telling => ({
    noticeId: `ntc_${n}`,
    channels,
    todos: { total: 5, completed: 2, open: 3 },
  });
  const twoChannels = [
    { name: "hook", kinds: ALL },
    { name: "phone", kinds: ALL },
  ];
  let n = 0;
  // A fresh session each time: each stop is news (the first of its reason), as a session's first stop is.
  const stop = (channels: Telling["channels"]) => async () => {
    n++;
    const scope = { sessionId: `ses_${n}`, directory: "/bench" };
    const detail = { unproductiveContinuations: 3, limit: 3, trigger: "idle", lookMs: 12 };
    await store.change(skip(scope, Date.now(), "stagnation", detail, { tell: telling(channels) }));
  };
  const results = await interleaved(
    {
      "without channels": stop([]),
      "with one channel": stop(twoChannels.slice(0, 1)),
      "with two channels": stop(twoChannels),
    },
    { rounds: 40, batch: 200, warmupRounds: 3 },
  );
  opened.close();
  cleanup();
  const group = `notices (${runtime})`;
  const us = (m: Sampled) => ({ median: m.median / 1000, low: m.p25 / 1000, high: m.p75 / 1000, unit: "µs" });
  const without = results["without channels"]!;
  const told = (channels: string, m: Sampled): Figure => {
    const ratio = ratioOf(m, without);
    return {
      group,
      name: `a stop told to ${channels}, ${PENDING.toLocaleString("en")} notices pending`,
      ...us(m),
      ratio: { of: "no channel", value: ratio },
      target: "≤ 1.5× no channel",
      met: ratio <= 1.5,
    };
  };
  return [
    { group, name: "a stop told, no channel (the toast's row only)", ...us(without) },
    told("one channel", results["with one channel"]!),
    told("two channels", results["with two channels"]!),
  ];
}
