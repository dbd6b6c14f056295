// What allow.ts promises on every database: what an allowance adds, the budget stop it lifts, the look it leaves owed,
// and its audit row.
import assert from "node:assert/strict";
import { allow } from "../../../src/store/changes/allow.js";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { TAKE } from "../../../src/store/changes/look-owed.js";
import { resume } from "../../../src/store/changes/resume.js";
import { q } from "../../../src/store/script.js";
import { NOW, S1, type ContractCase } from "../contract-world.js";

const allowedOf = (row: { allowedContinuations: number; allowedCost: number; allowedTokens: number }) => [
  row.allowedContinuations,
  row.allowedCost,
  row.allowedTokens,
];

export const ALLOW_CASES: ContractCase[] = [
  {
    name: "allow: adds what is given to the allowance, lifts the budget stop the user was told of, and says so",
    async run({ a, b, trail }) {
      const none = { continuations: 0, cost: 0, tokens: 0 };
      assert.deepEqual(await a.change(allow(S1, { continuations: 5 }, "cli", NOW)), {
        changed: false,
        granted: none,
        lifted: [],
      });
      const spent = { continuations: 20, continuationCost: 0.42, continuationTokens: 9000 };
      await a.change(changeSession(S1, NOW, { ...spent, notifiedStop: "budget_exhausted" }));
      const first = await b.change(allow(S1, { continuations: 10 }, "cli", NOW + 1));
      assert.deepEqual(first, {
        changed: true,
        granted: { continuations: 10, cost: 0, tokens: 0 },
        lifted: ["budget_exhausted"],
      });
      const row = (await a.read(q.session("ses_1")))!;
      assert.deepEqual(allowedOf(row), [10, 0, 0]);
      assert.equal(row.notifiedStop, null);
      assert.equal(row.recheckAt, NOW + 1, "another process allowed: a running enforcer owes it a look");
      assert.equal(row.continuations, 20, "the counts go on: only a resume starts them over");
      // A second grant adds to the first; with no stop to lift, no look is owed by it.
      await a.change(changeSession(S1, NOW + 2, {}, TAKE));
      const second = await a.change(allow(S1, { cost: 0.25, tokens: 5000 }, "tui", NOW + 3));
      assert.deepEqual(second, { changed: true, granted: { continuations: 0, cost: 0.25, tokens: 5000 }, lifted: [] });
      const after = (await a.read(q.session("ses_1")))!;
      assert.deepEqual(allowedOf(after), [10, 0.25, 5000]);
      assert.equal(after.recheckAt, null);
      const rows = await a.reader.all<{ reason: string; detail: string }>(
        "SELECT reason, detail FROM audit_events WHERE session_id = ? AND event = 'unstopped' ORDER BY id",
        "ses_1",
      );
      assert.deepEqual(
        rows.map((r) => [r.reason, JSON.parse(r.detail) as unknown]),
        [
          ["cli", { allowed: { continuations: 10, cost: 0, tokens: 0 }, lifted: ["budget_exhausted"] }],
          ["tui", { allowed: { continuations: 0, cost: 0.25, tokens: 5000 }, lifted: [] }],
        ],
      );
      assert.deepEqual(await trail("ses_1"), ["unstopped:cli", "unstopped:tui"]);
    },
  },
  {
    name: "allow: with no amount, as much again as the session had; the API's leaves no look owed; a resume ends it",
    async run({ a, b }) {
      const spent = { continuations: 7, continuationCost: 0.3, continuationTokens: 4000 };
      await a.change(changeSession(S1, NOW, { ...spent, notifiedStop: "cost_budget" }));
      const granted = await b.change(allow(S1, {}, "api", NOW + 1));
      assert.deepEqual(granted, {
        changed: true,
        granted: { continuations: 7, cost: 0.3, tokens: 4000 },
        lifted: ["cost_budget"],
      });
      const row = (await a.read(q.session("ses_1")))!;
      assert.deepEqual([...allowedOf(row), row.notifiedStop, row.recheckAt], [7, 0.3, 4000, null, null]);
      // A session that sent nothing yet is allowed one more continuation.
      const S2 = { ...S1, sessionId: "ses_2" };
      await a.change(changeSession(S2, NOW, { continuations: 0 }));
      const one = await a.change(allow(S2, {}, "cli", NOW + 2));
      assert.deepEqual(one.granted, { continuations: 1, cost: 0, tokens: 0 });
      // Another stop is not a budget's: the allowance is added, the stop stays for its own way on.
      await a.change(changeSession(S1, NOW + 3, { notifiedStop: "stagnation" }));
      assert.deepEqual((await a.change(allow(S1, { continuations: 2 }, "cli", NOW + 4))).lifted, []);
      assert.equal((await a.read(q.session("ses_1")))!.notifiedStop, "stagnation");
      // The allowance is for the stretch the budgets count: a resume starts both over.
      await a.change(resume(S1, "cli", NOW + 5));
      assert.deepEqual(allowedOf((await a.read(q.session("ses_1")))!), [0, 0, 0]);
    },
  },
  {
    name: "allow: refuses an amount below 0, or continuations and tokens that are not whole, and writes nothing",
    async run({ a, count }) {
      await a.change(changeSession(S1, NOW, { notifiedStop: "budget_exhausted" }));
      for (const grant of [{ continuations: -1 }, { cost: Number.NaN }, { tokens: 1.5 }, { continuations: 0.5 }])
        await assert.rejects(a.change(allow(S1, grant, "cli", NOW + 1)), RangeError);
      assert.equal((await a.read(q.session("ses_1")))!.notifiedStop, "budget_exhausted");
      assert.equal(await count("audit_events WHERE event = 'unstopped'"), 0);
    },
  },
];
