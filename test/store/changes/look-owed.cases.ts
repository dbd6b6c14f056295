// What look-owed.ts promises on every database: a look owed by a time, judging the idle it names (or one as old as
// itself, never an earlier look's), taken when made, and expired with its `expired` row; the other columns untouched.
import assert from "node:assert/strict";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { expireOwedLook, oweLook, takeOwedLook } from "../../../src/store/changes/look-owed.js";
import { q } from "../../../src/store/script.js";
import { NOW, S1, type ContractCase } from "../contract-world.js";

const owedIn = (dueBy: number) => q.sessionsToRecheck({ directory: "/p" }, dueBy);

export const LOOK_OWED_CASES: ContractCase[] = [
  {
    name: "look-owed: owed by a time for the idle it names, owed anew for one as old as itself, taken, expired once",
    async run({ a, b, trail }) {
      await a.change(changeSession(S1, NOW, { agent: "build", continuations: 3 }));
      await a.change(oweLook(S1, NOW + 1, { owe: NOW + 5000, since: NOW - 700 }));
      assert.deepEqual(await b.read(owedIn(NOW + 4999)), []);
      assert.deepEqual(await b.read(owedIn(NOW + 5000)), [
        { sessionId: "ses_1", recheckAt: NOW + 5000, owedSince: NOW - 700 },
      ]);
      // A look owed anew without an idle of its own judges one as old as itself, never the earlier look's.
      await b.change(oweLook(S1, NOW + 2, { owe: NOW + 6000 }));
      assert.deepEqual(await a.read(owedIn(NOW + 6000)), [
        { sessionId: "ses_1", recheckAt: NOW + 6000, owedSince: null },
      ]);
      await a.change(takeOwedLook(S1, NOW + 3));
      assert.deepEqual(await a.read(owedIn(NOW + 10_000)), []);
      const row = (await a.read(q.session("ses_1")))!;
      assert.deepEqual([row.agent, row.continuations, row.owedSince], ["build", 3, null]);
      await a.change(oweLook(S1, NOW + 4, { owe: NOW + 4 }));
      await b.change(expireOwedLook(S1, NOW + 61_000, { lateMs: 61_000 }));
      assert.deepEqual(await a.read(owedIn(NOW + 100_000)), []);
      assert.deepEqual(await trail("ses_1"), ["expired:stale_after_restart"]);
    },
  },
  {
    name: "look-owed: owing a look to a session never seen creates its row in the scope",
    async run({ a }) {
      await a.change(oweLook({ sessionId: "ses_new", directory: "/p", server: "pod-a" }, NOW, { owe: NOW }));
      assert.deepEqual(await a.read(q.sessionsToRecheck({ directory: "/p", server: "pod-a" }, NOW)), [
        { sessionId: "ses_new", recheckAt: NOW, owedSince: null },
      ]);
      assert.deepEqual(await a.read(q.sessionsToRecheck({ directory: "/p" }, NOW)), []);
    },
  },
];
