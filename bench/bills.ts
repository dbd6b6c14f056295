// Recording a continuation's bill as the engine does it (recordBill: the bill row, then the session's spend in its
// window, one IMMEDIATE transaction) against a floor that writes the same rows raw — the same bill row, the session
// read and its two spend columns updated, prepared once, in one transaction, through the same driver on the same file —
// measured interleaved with it (see lib.ts `interleaved`).
import BetterSqlite from "better-sqlite3";
import { changeSession } from "../src/store/changes/change-session.js";
import { recordBill } from "../src/store/changes/record-bill.js";
import type { NewBill } from "../src/store/schema.js";
import { openSqlite } from "../src/store/sqlite/open.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { interleaved, ratioOf, runtime, scratch, type Figure, type Sampled } from "./lib.js";

/** Sessions the bills go to, in turn: a session's row is read and written by each of its bills. */
const SESSIONS = 500;
const DIRECTORY = "/bench";

const BILL_COLUMNS = [
  "injection_id",
  "session_id",
  "directory",
  "server",
  "message_id",
  "continued_at",
  "recorded_at",
  "outcome",
  "error",
  "finish",
  "provider_id",
  "model_id",
  "messages",
  "steps",
  "tool_calls",
  "input_tokens",
  "output_tokens",
  "reasoning_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "tokens",
  "cost",
  "started_at",
  "ended_at",
  "todos_closed",
  "progressed",
  "files_changed",
  "session_cost",
  "session_tokens",
];

function rawRecorder(db: string): { record(bill: NewBill): void; close(): void } {
  const client = new BetterSqlite(db);
  client.pragma("busy_timeout = 5000");
  client.pragma("synchronous = NORMAL");
  const insert = client.prepare(
    `INSERT INTO continuation_bills (${BILL_COLUMNS.join(", ")}) VALUES (${BILL_COLUMNS.map(() => "?").join(", ")})
     ON CONFLICT DO NOTHING`,
  );
  const session = client.prepare("SELECT * FROM sessions WHERE session_id = ?");
  const spend = client.prepare(
    `UPDATE sessions SET continuation_cost = continuation_cost + ?, continuation_tokens = continuation_tokens + ?,
       updated_at = ? WHERE session_id = ?`,
  );
  const tx = client.transaction((b: NewBill) => {
    insert.run(
      b.injectionId,
      b.sessionId,
      b.directory,
      null,
      b.messageId,
      b.continuedAt,
      b.recordedAt,
      b.outcome,
      null,
      b.finish,
      b.providerId,
      b.modelId,
      b.messages,
      b.steps,
      b.toolCalls,
      b.inputTokens,
      b.outputTokens,
      b.reasoningTokens,
      b.cacheReadTokens,
      b.cacheWriteTokens,
      b.tokens,
      b.cost,
      b.startedAt,
      b.endedAt,
      b.todosClosed,
      b.progressed,
      b.filesChanged,
      b.sessionCost,
      b.sessionTokens,
    );
    session.get(b.sessionId);
    spend.run(b.cost, b.tokens, b.recordedAt, b.sessionId);
  });
  return { record: (bill) => tx.immediate(bill), close: () => client.close() };
}

export async function bills(): Promise<Figure[]> {
  const { db, cleanup } = scratch();
  const store = await openSqlite(db);
  const port = new SqliteStore(store);
  const now = Date.now();
  for (let i = 0; i < SESSIONS; i++)
    await port.change(changeSession({ sessionId: `ses_bill_${i}`, directory: DIRECTORY }, now, {}));
  const raw = rawRecorder(db);
  let n = 0;
  const bill = (): NewBill => {
    const at = Date.now();
    const id = `inj_bench_${n++}`;
    return {
      injectionId: id,
      sessionId: `ses_bill_${n % SESSIONS}`,
      directory: DIRECTORY,
      messageId: `msg_${id}`,
      continuedAt: at - 30_000,
      recordedAt: at,
      outcome: "completed",
      finish: "stop",
      providerId: "anthropic",
      modelId: "claude-sonnet",
      messages: 3,
      steps: 3,
      toolCalls: 4,
      inputTokens: 41_000,
      outputTokens: 1_200,
      reasoningTokens: 300,
      cacheReadTokens: 38_000,
      cacheWriteTokens: 500,
      tokens: 81_000,
      cost: 0.1425,
      startedAt: at - 29_000,
      endedAt: at - 1_000,
      todosClosed: 1,
      progressed: 1,
      filesChanged: 2,
      sessionCost: 2.5,
      sessionTokens: 900_000,
    };
  };
  const results = await interleaved(
    {
      "bill, raw (floor)": () => raw.record(bill()),
      bill: async () => {
        const next = bill();
        await port.change(recordBill({ sessionId: next.sessionId, directory: DIRECTORY }, next, next.recordedAt));
      },
    },
    { rounds: 40, batch: 200, warmupRounds: 3 },
  );
  raw.close();
  store.close();
  cleanup();
  const group = `bills (${runtime})`;
  const us = (m: Sampled) => ({ median: m.median / 1000, low: m.p25 / 1000, high: m.p75 / 1000, unit: "µs" });
  const ratio = ratioOf(results.bill!, results["bill, raw (floor)"]!);
  return [
    { group, name: "a bill, the same rows raw in one transaction (floor)", ...us(results["bill, raw (floor)"]!) },
    {
      group,
      name: "record a continuation's bill",
      ...us(results.bill!),
      ratio: { of: "raw bill", value: ratio },
      target: "≤ 1.5× floor",
      met: ratio <= 1.5,
    },
  ];
}
