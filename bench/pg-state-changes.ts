// 2b. State changes on PostgreSQL: arming and cancelling a countdown through the store port (a transaction holding the
// session's advisory lock, with its audit row) against the same rows written raw in one transaction, and against one
// raw autocommit INSERT, on the same real server (Debian's PostgreSQL in a temp folder, loopback), interleaved.
import pg from "pg";
import { arm } from "../src/store/changes/arm.js";
import { end } from "../src/store/changes/end.js";
import type { NewCountdown } from "../src/store/port.js";
import { openStore } from "../src/store/open/open.js";
import { PostgresServer, query } from "../test/support/postgres.js";
import { interleaved, ratioOf, type Figure, type Sampled } from "./lib.js";

const SQL = {
  armedFor: "SELECT id, owner, lease_until FROM countdowns WHERE session_id = $1 AND state = 'armed' LIMIT 1",
  insertCountdown:
    "INSERT INTO countdowns (id, session_id, directory, armed_at, deadline_at, state, owner, lease_until, attempt, todos_open, todos_total) VALUES ($1, $2, $3, $4, $5, 'armed', $6, $7, $8, $9, $10)",
  endCountdown:
    "UPDATE countdowns SET state = 'cancelled', ended_at = $1, end_reason = 'user_message', lease_until = NULL WHERE id = $2 AND state = 'armed'",
  insertAudit:
    "INSERT INTO audit_events (at, session_id, directory, event, reason, detail) VALUES ($1, $2, $3, $4, $5, $6)",
};

export async function pgStateChanges(): Promise<Figure[]> {
  // fsync stays on here (unlike the tests' servers): a commit costs what it costs on a real server.
  const server = await PostgresServer.start({ settings: { fsync: "on" } });
  try {
    const url = await server.createDatabase("bench");
    const store = await openStore(url);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
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
    const rawArm = async (c: NewCountdown) => {
      await client.query("BEGIN");
      await client.query({ name: "armedFor", text: SQL.armedFor, values: [c.sessionId] });
      await client.query({
        name: "insertCountdown",
        text: SQL.insertCountdown,
        values: [c.id, c.sessionId, c.directory, c.armedAt, c.deadlineAt, c.owner, c.leaseUntil, 0, 2, 3],
      });
      await client.query({
        name: "insertAudit",
        text: SQL.insertAudit,
        values: [c.armedAt, c.sessionId, c.directory, "armed", null, JSON.stringify({ countdownId: c.id })],
      });
      await client.query("COMMIT");
    };
    const rawCancel = async (c: NewCountdown) => {
      const now = Date.now();
      await client.query("BEGIN");
      await client.query({ name: "endCountdown", text: SQL.endCountdown, values: [now, c.id] });
      await client.query({
        name: "insertAudit",
        text: SQL.insertAudit,
        values: [now, c.sessionId, c.directory, "cancelled", "user_message", JSON.stringify({ countdownId: c.id })],
      });
      await client.query("COMMIT");
    };
    const ROUNDS = 20;
    const BATCH = 50;
    const armed = async (count: number) => {
      const list: NewCountdown[] = [];
      for (let i = 0; i < count; i++) {
        const c = countdown();
        await rawArm(c);
        list.push(c);
      }
      return list;
    };
    const toCancel = await armed((ROUNDS + 4) * BATCH);
    const toCancelRaw = await armed((ROUNDS + 4) * BATCH);
    let i = 0;
    let j = 0;
    let k = 0;
    const results = await interleaved(
      {
        "raw INSERT": async () =>
          void (await client.query({
            name: "insertAudit",
            text: SQL.insertAudit,
            values: [k++, "ses_floor", "/bench", "skipped", "no_todos", "{}"],
          })),
        "arm, raw (floor)": () => rawArm(countdown()),
        arm: async () => void (await store.change(arm(countdown(), { trigger: "bench" }))),
        "cancel, raw (floor)": () => rawCancel(toCancelRaw[j++]!),
        cancel: async () => void (await store.change(end(toCancel[i++]!, { cancelled: "user_message" }, Date.now()))),
      },
      { rounds: ROUNDS, batch: BATCH, warmupRounds: 3 },
    );
    await client.end();
    await store.close();
    const [{ server_version: version }] = (await query(server.url(), "SHOW server_version")).rows;
    const group = `state changes (PostgreSQL ${version}, loopback, fsync on)`;
    const us = (m: Sampled) => ({ median: m.median / 1000, low: m.p25 / 1000, high: m.p75 / 1000, unit: "µs" });
    const insert = results["raw INSERT"]!;
    const floor = (name: string, m: Sampled): Figure => ({ group, name, ...us(m) });
    const measured = (name: string, m: Sampled, f: Sampled, of: string): Figure => {
      const ratio = ratioOf(m, f);
      const note = `${ratioOf(m, insert).toFixed(2)}× one raw INSERT`;
      return { group, name, ...us(m), ratio: { of, value: ratio }, target: "≤ 1.5× floor", met: ratio <= 1.5, note };
    };
    return [
      floor("one raw INSERT, autocommit", insert),
      floor("arm, the same rows raw in one transaction (floor)", results["arm, raw (floor)"]!),
      measured("arm a countdown", results.arm!, results["arm, raw (floor)"]!, "raw arm"),
      floor("cancel, the same rows raw in one transaction (floor)", results["cancel, raw (floor)"]!),
      measured("cancel a countdown", results.cancel!, results["cancel, raw (floor)"]!, "raw cancel"),
    ];
  } finally {
    await server.destroy();
  }
}
