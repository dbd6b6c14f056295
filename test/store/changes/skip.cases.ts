// What skip.ts promises on every database: the decision's row with the session change that goes with it.
import assert from "node:assert/strict";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { expireOwedLook, skip } from "../../../src/store/changes/skip.js";
import { q } from "../../../src/store/script.js";
import { NOW, S1, type ContractCase } from "../contract-world.js";

export const SKIP_CASES: ContractCase[] = [
  {
    name: "skip and expire-owed-look: the decision's row with the session change that goes with it",
    async run({ a, trail }) {
      await a.change(skip(S1, NOW, "todos_complete", { stage: "idle" }));
      assert.equal(await a.read(q.session("ses_1")), undefined, "a skip alone writes no session row");
      const owed = { recheckAt: NOW + 5000, owedSince: NOW - 700 };
      await a.change(skip(S1, NOW + 1, "todo_fetch_failed", { attempt: 1 }, owed));
      assert.deepEqual(await a.read(q.sessionsToRecheck({ directory: "/p" }, NOW + 5000)), [
        { sessionId: "ses_1", ...owed },
      ]);
      // A look owed anew without an idle of its own judges one as old as itself, never the earlier look's.
      await a.change(changeSession(S1, NOW + 2, { recheckAt: NOW + 6000 }));
      assert.deepEqual(await a.read(q.sessionsToRecheck({ directory: "/p" }, NOW + 6000)), [
        { sessionId: "ses_1", recheckAt: NOW + 6000, owedSince: null },
      ]);
      await a.change(expireOwedLook(S1, NOW + 2, { lateMs: 61_000 }));
      assert.deepEqual(await a.read(q.sessionsToRecheck({ directory: "/p" }, NOW + 5000)), []);
      assert.deepEqual(await trail("ses_1"), [
        "skipped:todos_complete",
        "skipped:todo_fetch_failed",
        "expired:stale_after_restart",
      ]);
    },
  },
];
