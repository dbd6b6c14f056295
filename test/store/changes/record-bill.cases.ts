// What record-bill.ts promises on every database: a bill written once, counted in the session's window.
import assert from "node:assert/strict";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { recordBill } from "../../../src/store/changes/record-bill.js";
import { resume } from "../../../src/store/changes/resume.js";
import { q } from "../../../src/store/script.js";
import { NOW, S1, type ContractCase } from "../contract-world.js";

export const RECORD_BILL_CASES: ContractCase[] = [
  {
    name: "bills: written once whoever writes first, added to the session's spend in its window, summed for the day",
    async run({ a, b }) {
      const bill = (injectionId: string, continuedAt: number, cost: number, tokens: number) => ({
        injectionId,
        sessionId: "ses_1",
        directory: "/p",
        messageId: `msg_${injectionId}`,
        continuedAt,
        recordedAt: NOW,
        outcome: "completed" as const,
        modelId: "model-1",
        messages: 2,
        steps: 3,
        inputTokens: tokens - 10,
        outputTokens: 10,
        tokens,
        cost,
      });
      await a.change(changeSession(S1, NOW, { lastUserMessageAt: NOW - 100 }));
      const withWork = { ...bill("i3", NOW - 30, 0.1, 100), filesChanged: 2, sessionCost: 4.5, sessionTokens: 9000 };
      assert.equal(await a.change(recordBill(S1, withWork, NOW)), true);
      // Two processes bill the same turn at once: one row, counted once.
      const racing = await Promise.all(
        [a, b, a].map((s) => s.change(recordBill(S1, bill("i1", NOW - 50, 0.25, 1200), NOW))),
      );
      assert.deepEqual(racing.filter(Boolean).length, 1);
      assert.equal(await b.change(recordBill(S1, bill("i2", NOW - 40, 0.5, 3000), NOW)), true);
      // A continuation sent before the person's last message is history: billed, not counted in the window.
      assert.equal(await b.change(recordBill(S1, bill("i0", NOW - 500, 7, 99), NOW)), true);
      const row = (await a.read(q.session("ses_1")))!;
      assert.deepEqual([row.continuationCost, row.continuationTokens], [0.85, 4300]);
      assert.deepEqual(await a.read(q.recentBills("ses_1", 2)), [
        { cost: 0.1, tokens: 100 },
        { cost: 0.5, tokens: 3000 },
      ]);
      assert.equal(await b.read(q.spentSince(NOW - 60_000)), 7.85);
      const [written] = await a.reader.all<Record<string, unknown>>(
        `SELECT sum(continuations) AS n, sum(cost) AS cost, sum(files_changed) AS files, max(session_cost) AS spend
         FROM continuation_costs WHERE session_id = ?`,
        "ses_1",
      );
      assert.deepEqual([written!.n, written!.cost, written!.files, written!.spend].map(Number), [4, 7.85, 2, 4.5]);
      // A resume starts a new allowance.
      await a.change(resume(S1, "cli", NOW + 1));
      const resumed = (await a.read(q.session("ses_1")))!;
      assert.deepEqual([resumed.continuationCost, resumed.continuationTokens], [0, 0]);
      // A continuation sent before the resume is history too; one sent after it counts.
      await b.change(recordBill(S1, bill("i4", NOW - 20, 3, 300), NOW + 2));
      await b.change(recordBill(S1, bill("i5", NOW + 1, 0.5, 50), NOW + 2));
      const after = (await a.read(q.session("ses_1")))!;
      assert.deepEqual([after.continuationCost, after.continuationTokens], [0.5, 50]);
    },
  },
  {
    name: "bills: the counts a bill leaves out are stored as 0, and a bill with them all as given",
    async run({ a }) {
      const base = {
        sessionId: "ses_1",
        directory: "/p",
        continuedAt: NOW - 10,
        recordedAt: NOW,
        outcome: "completed" as const,
      };
      assert.equal(await a.change(recordBill(S1, { ...base, injectionId: "i_bare", messageId: "m_bare" }, NOW)), true);
      const full = { messages: 1, steps: 2, toolCalls: 3, inputTokens: 4, outputTokens: 5, reasoningTokens: 6 };
      const all = { ...full, cacheReadTokens: 7, cacheWriteTokens: 8, tokens: 9, cost: 0.5 };
      assert.equal(
        await a.change(recordBill(S1, { ...base, ...all, injectionId: "i_full", messageId: "m_f" }, NOW)),
        true,
      );
      const counts =
        "messages, steps, tool_calls, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, tokens, cost";
      const stored = await a.reader.all<Record<string, number>>(
        `SELECT injection_id, ${counts} FROM continuation_bills ORDER BY injection_id`,
      );
      assert.deepEqual(
        stored.map((r) => Object.values(r).map(Number).slice(1)),
        [
          [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
          [1, 2, 3, 4, 5, 6, 7, 8, 9, 0.5],
        ],
      );
      assert.deepEqual(
        stored.map((r) => r.injection_id),
        ["i_bare", "i_full"],
      );
    },
  },
];
