// What reads.ts promises on every database: what answered an idle since, in one read.
import assert from "node:assert/strict";
import { arm } from "../../src/store/changes/arm.js";
import { cancelByKey } from "../../src/store/changes/cancel-by-key.js";
import { changeSession } from "../../src/store/changes/change-session.js";
import { claim } from "../../src/store/changes/claim.js";
import { recordBill } from "../../src/store/changes/record-bill.js";
import { claimNotices } from "../../src/store/changes/claim-notices.js";
import { settleNotice } from "../../src/store/changes/settle-notice.js";
import { park } from "../../src/store/changes/park.js";
import { unpark } from "../../src/store/changes/unpark.js";
import { noticeTurnFacts, sessionState, sinceIdle, spending } from "../../src/store/reads.js";
import { countdown, injection, LATER, ME, NOW, parkRequest, S1, type ContractCase } from "./contract-world.js";
import { insertNotices, newNotice } from "./notice-rows.js";

export const READS_CASES: ContractCase[] = [
  {
    name: "reads: what answered an idle since, in one read",
    async run({ a, b }) {
      assert.deepEqual(await a.read(sinceIdle("ses_1", NOW)), {
        row: undefined,
        pending: false,
        userCancelledAt: undefined,
        answeredBy: undefined,
        parked: undefined,
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
      // A park that holds is read with the row, whether an idle is judged or not; one that ended is not.
      await a.change(park(S1, parkRequest("park_1", { reason: "agent", wakeAt: LATER }), NOW));
      assert.deepEqual((await b.read(sinceIdle("ses_1"))).parked, { parkId: "park_1", reason: "agent", wakeAt: LATER });
      await a.change(unpark(S1, "command", NOW + 1));
      assert.equal((await b.read(sinceIdle("ses_1", NOW, LATER))).parked, undefined);
    },
  },
  {
    name: "reads: a session's state is one statement: its row, its armed countdown, a pending continuation, its park",
    async run({ a, b }) {
      assert.deepEqual(await a.read(sessionState("ses_1")), { row: undefined, pending: false });
      const cd1 = countdown("cd1");
      await a.change(arm(cd1, {}));
      const armed = await b.read(sessionState("ses_1", { since: NOW, now: LATER }));
      const ref = { id: "cd1", owner: ME, leaseUntil: cd1.leaseUntil };
      assert.deepEqual([armed.row, armed.armed, armed.pending], [undefined, ref, false]);
      await a.change(changeSession(S1, NOW, { agent: "build" }));
      await a.change(claim(injection("i1", "cd1"), {}));
      const fired = await b.read(sessionState("ses_1", { since: NOW, now: LATER }));
      assert.equal(fired.row?.agent, "build");
      assert.deepEqual([fired.armed, fired.pending], [undefined, true]);
      assert.deepEqual(fired.answeredBy, { injectionId: "i1", firedAt: NOW + 2000 });
      // Another session's rows are not this one's.
      assert.deepEqual(await b.read(sessionState("ses_2", { since: NOW, now: LATER })), {
        row: undefined,
        pending: false,
      });
      await a.change(park(S1, parkRequest("park_1", { reason: "agent", wakeAt: LATER }), NOW));
      assert.deepEqual((await b.read(sessionState("ses_1"))).park, { id: "park_1", reason: "agent", wakeAt: LATER });
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
  {
    name: "reads: a notice's turn: the session's pending notices on its channel oldest first, and what it sent since",
    async run({ a, b }) {
      const old = (id: string, more = {}) => newNotice(id, NOW - 10_000, more);
      await insertNotices(a, newNotice("n_b", NOW - 1000), newNotice("n_a", NOW - 1000), newNotice("n_0", NOW - 5000));
      await insertNotices(a, old("n_ntfy", { channel: "ntfy" }), old("n_ses_2", { sessionId: "ses_2" }));
      await insertNotices(a, old("s_1"), old("s_2"), old("s_3"), old("s_ntfy", { channel: "ntfy" }), old("s_failed"));
      const held = await a.change(claimNotices({ directory: "/p" }, ["hook", "ntfy"], ME, NOW - 10_000, 60_000, 10));
      const byId = new Map(held.map((r) => [r.id, r]));
      const settle = (id: string, at: number, sent = true) => {
        const outcome = sent
          ? ({ sent: true, body: "{}", folded: [], deliveryMs: 1 } as const)
          : ({ sent: false, error: "404", body: "{}", deliveryMs: 1 } as const);
        return a.change(settleNotice(byId.get(id)!, ME, outcome, "webhook", at));
      };
      for (const [id, at] of [
        ["s_3", NOW - 100],
        ["s_1", NOW - 300],
        ["s_2", NOW - 200],
        ["s_ntfy", NOW],
      ] as const)
        await settle(id, at);
      await settle("s_failed", NOW - 100, false);
      const facts = await b.read(noticeTurnFacts("ses_1", "hook", NOW - 200));
      assert.deepEqual(
        facts.pending.map((r) => r.id),
        ["n_0", "n_a", "n_b"],
        "oldest first; made in the same millisecond, by id",
      );
      assert.deepEqual(facts.sentAt, [NOW - 200, NOW - 100], "sent from `since` on, oldest first, on this channel");
      assert.deepEqual((await b.read(noticeTurnFacts("ses_1", "hook", NOW - 1000))).sentAt, [
        NOW - 300,
        NOW - 200,
        NOW - 100,
      ]);
      assert.deepEqual(await b.read(noticeTurnFacts("ses_3", "hook", 0)), { pending: [], sentAt: [] });
    },
  },
];
