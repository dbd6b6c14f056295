// Notices: a stop that tells (skip's change with its telling: `notified_stop`, the notice built, an outbox row per
// channel). Judged: the same stop on a database whose outbox holds 10,000 notices still pending (a receiver down for a
// while) against one whose outbox is empty — pending notices must not make a stop dearer. Said beside it: what telling
// a channel adds to a stop at all (the same stop with no channel configured). Measured interleaved (lib.ts).
import { skip } from "../src/store/changes/skip.js";
import type { Telling } from "../src/store/changes/tell-stop.js";
import { change, q } from "../src/store/script.js";
import { openSqlite } from "../src/store/sqlite/open.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import type { NewNotice } from "../src/store/types.js";
import { interleaved, ratioOf, runtime, scratch, type Figure, type Sampled } from "./lib.js";

const PENDING = 10_000;
const ALL = ["question", "budget", "stuck", "done", "error"] as const;
const ONE_CHANNEL: Telling["channels"] = [{ name: "hook", kinds: ALL }];

async function database(pending: number) {
  const { db, cleanup } = scratch();
  const opened = await openSqlite(db);
  const store = new SqliteStore(opened);
  const now = Date.now();
  const rows: NewNotice[] = Array.from({ length: pending }, (_, i) => ({
    ...{ id: `ntc_old${i}:hook`, noticeId: `ntc_old${i}`, sessionId: `ses_old${i % 500}`, directory: "/bench" },
    ...{ channel: "hook", kind: "stuck", reason: "stagnation", createdAt: now - i, body: "{}" },
  }));
  if (rows.length > 0) await store.change(change("bench", undefined, () => q.insertNotices(rows)));
  return { store, close: () => (opened.close(), cleanup()) };
}

export async function notices(): Promise<Figure[]> {
  const empty = await database(0);
  const backlog = await database(PENDING);
  let n = 0;
  // A fresh session each time: each stop is news (the first of its reason), as a session's first stop is.
  const stop = (store: SqliteStore, channels: Telling["channels"]) => async () => {
    n++;
    const scope = { sessionId: `ses_${n}`, directory: "/bench" };
    const detail = { unproductiveContinuations: 3, limit: 3, trigger: "idle", lookMs: 12 };
    const tell: Telling = { noticeId: `ntc_${n}`, channels, todos: { total: 5, completed: 2, open: 3 } };
    await store.change(skip(scope, Date.now(), "stagnation", detail, { tell }));
  };
  const results = await interleaved(
    {
      "no channel": stop(empty.store, []),
      "outbox empty": stop(empty.store, ONE_CHANNEL),
      "notices pending": stop(backlog.store, ONE_CHANNEL),
    },
    { rounds: 40, batch: 200, warmupRounds: 3 },
  );
  empty.close();
  backlog.close();
  const group = `notices (${runtime})`;
  const us = (m: Sampled) => ({ median: m.median / 1000, low: m.p25 / 1000, high: m.p75 / 1000, unit: "µs" });
  const none = results["no channel"]!;
  const emptyOutbox = results["outbox empty"]!;
  const pending = results["notices pending"]!;
  const ratio = ratioOf(pending, emptyOutbox);
  return [
    { group, name: "a stop told, no channel configured", ...us(none) },
    {
      group,
      name: "a stop told to a channel, the outbox empty",
      ...us(emptyOutbox),
      note: `${ratioOf(emptyOutbox, none).toFixed(2)}× no channel: the notice and its row`,
    },
    {
      group,
      name: `a stop told to a channel, ${PENDING.toLocaleString("en")} notices pending`,
      ...us(pending),
      ratio: { of: "outbox empty", value: ratio },
      target: "≤ 1.5× outbox empty",
      met: ratio <= 1.5,
    },
  ];
}
