// What reads.ts promises on every database: what answered an idle since, in one read.
import assert from "node:assert/strict";
import { arm } from "../../src/store/changes/arm.js";
import { cancelByKey } from "../../src/store/changes/cancel-by-key.js";
import { changeSession } from "../../src/store/changes/change-session.js";
import { claim } from "../../src/store/changes/claim.js";
import { recordBill } from "../../src/store/changes/record-bill.js";
import { sinceIdle, spending } from "../../src/store/reads.js";
import { countdown, injection, LATER, NOW, S1, type ContractCase } from "./contract-world.js";

export const READS_CASES: ContractCase[] = [
  {
    name: "reads: what answered an idle since, in one read",
    async run({ a, b }) {
      assert.deepEqual(await a.read(sinceIdle("ses_1", NOW)), {
        row: undefined,
        pending: false,
        userCancelledAt: undefined,
        answeredBy: undefined,
      });
      await a.change(changeSession(S1, NOW, { agent: "build" }));
      await a.change(arm(countdown("cd1"), {}));
      await b.change(cancelByKey(S1, NOW + 10, {}));
      await a.change(arm(countdown("cd2", "ses_1", { armedAt: NOW + 20 }), {}));
      await a.change(claim(injection("i2", "cd2"), {}));
      const seen = await b.read(sinceIdle("ses_1", NOW, LATER));
      assert.equal(seen.row?.agent, "build");
      assert.deepEqual(
        [seen.pending, seen.userCancelledAt, seen.answeredBy],
        [true, NOW + 10, { injectionId: "i2", firedAt: NOW + 2000 }],
      );
      assert.deepEqual((await b.read(sinceIdle("ses_1"))).answeredBy, undefined, "no idle: only the row");
    },
  },
  {
    name: "reads: the spend a daily cap needs, and today's latest bills of the database for a session with none",
    async run({ a, b }) {
      const bill = (injectionId: string, sessionId: string, cost: number, recordedAt: number) => ({
        injectionId,
        sessionId,
        directory: "/p",
        messageId: `msg_${injectionId}`,
        continuedAt: recordedAt - 10,
        recordedAt,
        outcome: "completed" as const,
        tokens: 100,
        cost,
      });
      const other = { sessionId: "ses_other", directory: "/p" };
      for (const [i, cost] of [0.001, 0.002, 0.003, 0.004, 0.005, 0.006].entries())
        await a.change(recordBill(other, bill(`i_day_${i}`, "ses_other", cost, NOW + i), NOW + i));
      // Yesterday's is not today's.
      await a.change(recordBill(other, bill("i_old", "ses_other", 9, NOW - 2 * 86_400_000), NOW));
      const first = await b.read(spending("ses_new", NOW + 10, { daily: true, recent: 5 }));
      assert.deepEqual(first.recentBills, []);
      assert.deepEqual(
        first.recentBillsToday?.map((x) => x.cost),
        [0.002, 0.003, 0.004, 0.005, 0.006],
      );
      assert.ok(Math.abs(first.today! - 0.021) < 1e-9);
      // A session with bills of its own, or no daily cap: the day's are not read.
      const own = await b.read(spending("ses_other", NOW + 10, { daily: true, recent: 5 }));
      assert.equal(own.recentBillsToday, undefined);
      assert.equal(own.recentBills.length, 5);
      const noCap = await b.read(spending("ses_new", NOW + 10, { daily: false, recent: 5 }));
      assert.deepEqual([noCap.today, noCap.recentBillsToday], [undefined, undefined]);
    },
  },
];
