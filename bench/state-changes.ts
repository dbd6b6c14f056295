// 2. State changes: arming and cancelling a countdown as the engine does them (one IMMEDIATE transaction with its
// audit row), each against a floor that writes the same rows raw — the same statements, prepared once, in one
// transaction, through the same driver on the same file — measured interleaved with it (see lib.ts `interleaved`).
// Parking a session and waking its park are held to the engine's own arm: a wait costs no more than a countdown.
import { openSqlite } from "../src/store/sqlite/open.js";
import { arm } from "../src/store/changes/arm.js";
import { changeSession } from "../src/store/changes/change-session.js";
import { end } from "../src/store/changes/end.js";
import { park } from "../src/store/changes/park.js";
import { wake } from "../src/store/changes/wake.js";
import type { NewCountdown } from "../src/store/port.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { Metrics } from "../src/service/metrics.js";
import { observeStore } from "../src/service/observed-store.js";
import { interleaved, ratioOf, runtime, scratch, type Figure, type Sampled } from "./lib.js";

/** The same rows as arming and cancelling write, raw: what a state change cannot cost less than. */
interface RawFloors {
  /** One audit row, autocommit: the cheapest write there is (the floor of earlier runs, kept for comparison). */
  insert(): void;
  arm(c: NewCountdown): void;
  cancel(c: NewCountdown): void;
  close(): void;
}

const SQL = {
  armedFor: "SELECT id, owner, lease_until FROM countdowns WHERE session_id = ? AND state = 'armed' LIMIT 1",
  insertCountdown:
    "INSERT INTO countdowns (id, session_id, directory, armed_at, deadline_at, state, owner, lease_until, attempt, todos_open, todos_total) VALUES (?, ?, ?, ?, ?, 'armed', ?, ?, ?, ?, ?)",
  endCountdown:
    "UPDATE countdowns SET state = 'cancelled', ended_at = ?, end_reason = 'user_message', lease_until = NULL WHERE id = ? AND state = 'armed'",
  insertAudit: "INSERT INTO audit_events (at, session_id, directory, event, reason, detail) VALUES (?, ?, ?, ?, ?, ?)",
};

function armedDetail(c: NewCountdown): string {
  return JSON.stringify({
    countdownId: c.id,
    deadlineAt: c.deadlineAt,
    todosOpen: c.todosOpen,
    todosTotal: c.todosTotal,
    attempt: c.attempt,
    trigger: "bench",
  });
}

async function rawFloors(db: string): Promise<RawFloors> {
  type Statement = { run(...params: unknown[]): unknown; get(...params: unknown[]): unknown };
  let prepare: (sql: string) => Statement;
  let immediate: (work: () => void) => void;
  let close: () => void;
  if (runtime.startsWith("bun")) {
    const { Database } = await import("bun:sqlite");
    const client = new Database(db);
    client.exec("PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL");
    prepare = (sql) => client.query(sql) as unknown as Statement;
    const tx = client.transaction((work: () => void) => work());
    immediate = (work) => tx.immediate(work);
    close = () => client.close();
  } else {
    const { default: BetterSqlite } = await import("better-sqlite3");
    const client = new BetterSqlite(db);
    client.pragma("busy_timeout = 5000");
    client.pragma("synchronous = NORMAL");
    prepare = (sql) => client.prepare(sql) as unknown as Statement;
    const tx = client.transaction((work: () => void) => work());
    immediate = (work) => tx.immediate(work);
    close = () => client.close();
  }
  const q = Object.fromEntries(Object.entries(SQL).map(([k, sql]) => [k, prepare(sql)])) as Record<
    keyof typeof SQL,
    Statement
  >;
  let i = 0;
  return {
    insert: () => void q.insertAudit.run(i++, "ses_floor", "/bench", "skipped", "no_todos", "{}"),
    arm: (c) =>
      immediate(() => {
        q.armedFor.get(c.sessionId);
        q.insertCountdown.run(
          c.id,
          c.sessionId,
          c.directory,
          c.armedAt,
          c.deadlineAt,
          c.owner,
          c.leaseUntil,
          c.attempt,
          c.todosOpen,
          c.todosTotal,
        );
        q.insertAudit.run(c.armedAt, c.sessionId, c.directory, "armed", null, armedDetail(c));
      }),
    cancel: (c) =>
      immediate(() => {
        const now = Date.now();
        q.endCountdown.run(now, c.id);
        q.insertAudit.run(
          now,
          c.sessionId,
          c.directory,
          "cancelled",
          "user_message",
          JSON.stringify({ countdownId: c.id }),
        );
      }),
    close,
  };
}

export async function stateChanges(): Promise<Figure[]> {
  const { db, cleanup } = scratch();
  const store = await openSqlite(db);
  const port = new SqliteStore(store);
  const floors = await rawFloors(db);
  // The service's store: the same, each change timed and its audit rows counted (serve --listen).
  const observed = observeStore(port, new Metrics(() => ({ armed: 0, paused: 0, serversFollowed: 0 })));
  let n = 0;
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
  // Countdowns armed beforehand for every cancel, the engine's and the floor's alike.
  const ROUNDS = 40;
  const BATCH = 200;
  const armedFor = (count: number) => {
    const list: NewCountdown[] = [];
    for (let i = 0; i < count; i++) {
      const c = countdown();
      floors.arm(c);
      list.push(c);
    }
    return list;
  };
  const toCancel = armedFor((ROUNDS + 5) * BATCH);
  const toCancelRaw = armedFor((ROUNDS + 5) * BATCH);
  let cancels = 0;
  let cancelsRaw = 0;
  // A park as continue_later asks for one (an hour, the agent's reason), on a session of its own each time: one the
  // engine has seen before (a session parks after turns of its own), so its row exists.
  let parks = 0;
  const sessions = (ROUNDS + 5) * BATCH * 2;
  for (let i = 0; i < sessions; i++)
    await port.change(changeSession({ sessionId: `ses_park_${i}`, directory: "/bench", server: null }, Date.now(), {}));
  const parkNext = () => {
    const now = Date.now();
    const scope = { sessionId: `ses_park_${parks}`, directory: "/bench", server: null };
    const request = {
      id: `park_bench_${parks++}`,
      reason: "agent" as const,
      wakeAt: now + 3_600_000,
      detail: { asked: "CI" },
    };
    return port.change(park(scope, request, now));
  };
  // Parks made beforehand for every wake (the parks the "park" figure makes are woken in the order made).
  for (let i = 0; i < (ROUNDS + 5) * BATCH; i++) await parkNext();
  let wakes = 0;
  const wakeNext = () =>
    port.change(wake({ sessionId: `ses_park_${wakes++}`, directory: "/bench", server: null }, "command", Date.now()));
  const results = await interleaved(
    {
      "raw INSERT": () => floors.insert(),
      "arm, raw (floor)": () => floors.arm(countdown()),
      arm: async () => void (await port.change(arm(countdown(), { trigger: "bench" }))),
      "arm, metrics on": async () => void (await observed.change(arm(countdown(), { trigger: "bench" }))),
      "cancel, raw (floor)": () => floors.cancel(toCancelRaw[cancelsRaw++]!),
      cancel: async () =>
        void (await port.change(end(toCancel[cancels++]!, { cancelled: "user_message" }, Date.now()))),
      park: async () => void (await parkNext()),
      wake: async () => void (await wakeNext()),
    },
    { rounds: ROUNDS, batch: BATCH, warmupRounds: 3 },
  );
  floors.close();
  store.close();
  cleanup();
  const group = `state changes (${runtime})`;
  const us = (m: Sampled) => ({ median: m.median / 1000, low: m.p25 / 1000, high: m.p75 / 1000, unit: "µs" });
  const floor = (name: string, m: Sampled): Figure => ({ group, name, ...us(m) });
  const insert = results["raw INSERT"]!;
  const measured = (name: string, m: Sampled, f: Sampled, of: string): Figure => {
    const ratio = ratioOf(m, f);
    const note = `${ratioOf(m, insert).toFixed(2)}× one raw INSERT`;
    return { group, name, ...us(m), ratio: { of, value: ratio }, target: "≤ 1.5× floor", met: ratio <= 1.5, note };
  };
  const againstArm = (name: string, m: Sampled): Figure => {
    const ratio = ratioOf(m, results.arm!);
    const note = `${ratioOf(m, insert).toFixed(2)}× one raw INSERT`;
    return { group, name, ...us(m), ratio: { of: "arm", value: ratio }, target: "≤ 1.5× arm", met: ratio <= 1.5, note };
  };
  return [
    floor("one raw INSERT, autocommit (for comparison)", insert),
    floor("arm, the same rows raw in one transaction (floor)", results["arm, raw (floor)"]!),
    measured("arm a countdown", results.arm!, results["arm, raw (floor)"]!, "raw arm"),
    measured(
      "arm a countdown, the service's metrics on",
      results["arm, metrics on"]!,
      results["arm, raw (floor)"]!,
      "raw arm",
    ),
    floor("cancel, the same rows raw in one transaction (floor)", results["cancel, raw (floor)"]!),
    measured("cancel a countdown", results.cancel!, results["cancel, raw (floor)"]!, "raw cancel"),
    againstArm("park a session (continue_later)", results.park!),
    againstArm("wake a park (its session owed a look)", results.wake!),
  ];
}
