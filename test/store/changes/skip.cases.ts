// What skip.ts promises on every database: the decision's row, with the session change and the look owed that go with
// it, in one transaction.
import assert from "node:assert/strict";
import { skip } from "../../../src/store/changes/skip.js";
import { q } from "../../../src/store/script.js";
import { NOW, S1, type ContractCase } from "../contract-world.js";

export const SKIP_CASES: ContractCase[] = [
  {
    name: "skip: the decision's row with the session change and the look owed that go with it",
    async run({ a, trail }) {
      await a.change(skip(S1, NOW, "todos_complete", { stage: "idle" }));
      assert.equal(await a.read(q.session("ses_1")), undefined, "a skip alone writes no session row");
      const owed = { owe: NOW + 5000, since: NOW - 700 };
      await a.change(
        skip(S1, NOW + 1, "todo_fetch_failed", { attempt: 1 }, { update: { agent: "build" }, look: owed }),
      );
      assert.deepEqual(await a.read(q.sessionsToRecheck({ directory: "/p" }, NOW + 5000)), [
        { sessionId: "ses_1", recheckAt: NOW + 5000, owedSince: NOW - 700 },
      ]);
      assert.equal((await a.read(q.session("ses_1")))?.agent, "build");
      assert.deepEqual(await trail("ses_1"), ["skipped:todos_complete", "skipped:todo_fetch_failed"]);
    },
  },
];
