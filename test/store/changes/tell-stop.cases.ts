// What tell-stop.ts promises on every database: a stop a person must hear of is told once — its reason remembered in
// the session's row and one outbox row per channel that takes its kind, written in the transaction of the skip or the
// countdown's end that decided it (or in one of its own for the continuations given up); a repeat tells nothing, all
// done is told only after continuations, a cancel never.
import assert from "node:assert/strict";
import { noticeOf, type Notice } from "../../../src/core/notices.js";
import { arm } from "../../../src/store/changes/arm.js";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { end } from "../../../src/store/changes/end.js";
import { skip } from "../../../src/store/changes/skip.js";
import { tellStopChange, type Telling } from "../../../src/store/changes/tell-stop.js";
import { q } from "../../../src/store/script.js";
import { countdown, NOW, S1, type ContractCase } from "../contract-world.js";

const S2 = { sessionId: "ses_2", directory: "/p" };

/** Two channels: `hook` takes no notice of a budget or of all done, `phone` none of being stuck. */
function telling(noticeId: string): Telling {
  return {
    noticeId,
    channels: [
      { name: "hook", kinds: ["stuck", "question", "error"] },
      { name: "phone", kinds: ["budget", "question", "done"] },
    ],
    todos: { total: 4, completed: 1, open: 3 },
    title: "Fix the parser",
  };
}

const bodyOf = (row: { body: string } | undefined): Notice => JSON.parse(row?.body ?? "null") as Notice;

export const TELL_STOP_CASES: ContractCase[] = [
  {
    name: "tell-stop: a skip of stagnation writes notified_stop and one notice for the channel taking it, once",
    async run({ a, b, count, trail }) {
      await a.change(
        changeSession(S1, NOW - 10, { continuations: 3, continuationCost: 0.01, continuationTokens: 5000 }),
      );
      const detail = { unproductiveContinuations: 3 };
      const told = await a.change(skip(S1, NOW, "stagnation", detail, { tell: telling("ntc_1") }));
      assert.deepEqual(told, { news: true, notices: 1, kind: "stuck" });
      assert.equal((await b.read(q.session("ses_1")))?.notifiedStop, "stagnation");
      assert.equal(await count("notices"), 1, "the channel that takes no notice of being stuck gets none");
      const [row] = await b.read(q.pendingNoticesOf("ses_1", "hook"));
      const { body, ...columns } = row!;
      assert.deepEqual(columns, {
        ...{ id: "ntc_1:hook", noticeId: "ntc_1", sessionId: "ses_1", directory: "/p", server: null },
        ...{ channel: "hook", kind: "stuck", reason: "stagnation", createdAt: NOW, state: "pending", attempts: 0 },
        ...{ nextAttemptAt: NOW, owner: null, leaseUntil: null, sentAt: null, lastError: null, foldedInto: null },
        updatedAt: NOW,
      });
      // The notice the core makes (test/core/notices.test.ts) of the session's counts, the todos, the title, the stop.
      const made = noticeOf({
        ...{ id: "ntc_1", now: NOW, directory: "/p", sessionId: "ses_1", title: "Fix the parser" },
        ...{ reason: "stagnation", detail, todos: { total: 4, completed: 1, open: 3 } },
        continuations: { count: 3, cost: 0.01, tokens: 5000 },
      });
      assert.deepEqual(JSON.parse(body), made);
      assert.deepEqual(
        [made?.text, made?.goOn.command],
        ["Stopped: 3 times without progress.", "todo-continuation resume ses_1"],
      );
      const again = await a.change(skip(S1, NOW + 1, "stagnation", detail, { tell: telling("ntc_2") }));
      assert.deepEqual(again, { news: false, notices: 0 });
      assert.equal(await count("notices"), 1, "a repeat of the stop tells nothing");
      assert.deepEqual(await trail("ses_1"), ["skipped:stagnation", "skipped:stagnation"]);
    },
  },
  {
    name: "tell-stop: the notice is written in the skip's transaction: an outbox row refused takes the skip with it",
    async run({ a, count, trail }) {
      // A channel with no name makes a row the database refuses (its channel is NOT NULL).
      const broken = { ...telling("ntc_x"), channels: [{ name: undefined as unknown as string, kinds: ["stuck"] }] };
      const stop = skip(S1, NOW, "stagnation", { unproductiveContinuations: 3 }, { tell: broken as Telling });
      await assert.rejects(a.change(stop));
      assert.deepEqual(await trail("ses_1"), [], "the skip's own row went with it");
      assert.equal(await a.read(q.session("ses_1")), undefined, "and the reason it would have remembered");
      assert.equal(await count("notices"), 0);
    },
  },
  {
    name: "tell-stop: a question on a session with no row makes the row and a notice on each channel taking it",
    async run({ a, b }) {
      assert.equal(await a.read(q.session("ses_2")), undefined);
      const told = await a.change(skip(S2, NOW, "waiting_for_user", { source: "text" }, { tell: telling("ntc_q") }));
      assert.deepEqual(told, { news: true, notices: 2, kind: "question" });
      const row = await b.read(q.session("ses_2"));
      assert.deepEqual([row?.notifiedStop, row?.directory], ["waiting_for_user", "/p"]);
      const rows = [
        ...(await b.read(q.pendingNoticesOf("ses_2", "hook"))),
        ...(await b.read(q.pendingNoticesOf("ses_2", "phone"))),
      ];
      assert.deepEqual(
        rows.map((r) => [r.id, r.noticeId, r.kind, r.reason]),
        [
          ["ntc_q:hook", "ntc_q", "question", "waiting_for_user"],
          ["ntc_q:phone", "ntc_q", "question", "waiting_for_user"],
        ],
      );
      assert.equal(rows[0]!.body, rows[1]!.body, "one notice, the same body on each channel");
      const notice = bodyOf(rows[0]);
      assert.deepEqual(
        [notice.kind, notice.text, notice.continuations.count, notice.goOn.command],
        ["question", "Waiting: the assistant asked you.", 0, "opencode --session ses_2"],
      );
    },
  },
  {
    name: "tell-stop: all done tells nothing and remembers nothing without continuations; after them, a done notice",
    async run({ a, b, count }) {
      const none = await a.change(skip(S1, NOW, "todos_complete", {}, { tell: telling("ntc_d0") }));
      assert.deepEqual(none, { news: false, notices: 0 });
      assert.equal(await a.read(q.session("ses_1")), undefined, "no row written for a list the person watched close");
      assert.equal(await count("notices"), 0);
      await a.change(changeSession(S1, NOW + 1, { continuations: 2, continuationCost: 0.004 }));
      const done = await a.change(skip(S1, NOW + 2, "todos_complete", {}, { tell: telling("ntc_d1") }));
      assert.deepEqual(done, { news: true, notices: 1, kind: "done" });
      assert.equal((await b.read(q.session("ses_1")))?.notifiedStop, "todos_complete");
      const [row] = await b.read(q.pendingNoticesOf("ses_1", "phone"));
      const notice = bodyOf(row);
      assert.deepEqual(
        [row?.id, notice.kind, notice.text, notice.continuations],
        ["ntc_d1:phone", "done", "Done: every todo is closed.", { count: 2, cost: 0.004, tokens: 0 }],
      );
      assert.equal(await count("notices"), 1);
    },
  },
  {
    name: "tell-stop: a countdown ended by a guard's skip tells the stop; a cancel and an end already written do not",
    async run({ a, b, count }) {
      const ref = (id: string) => ({ id, sessionId: "ses_1", directory: "/p" });
      await a.change(arm(countdown("cd1"), {}));
      assert.equal(
        await a.change(end(ref("cd1"), { cancelled: "user_message" }, NOW + 1, undefined, undefined, telling("ntc_c"))),
        true,
      );
      assert.equal(await count("notices"), 0, "a cancel is no stop to tell");
      assert.equal((await a.read(q.session("ses_1")))?.notifiedStop ?? null, null);
      await a.change(arm(countdown("cd2", "ses_1", { armedAt: NOW + 2 }), {}));
      const spent = { skipped: "budget_exhausted", detail: { continuations: 10 } } as const;
      assert.equal(await a.change(end(ref("cd2"), spent, NOW + 3, undefined, undefined, telling("ntc_b"))), true);
      const [row] = await b.read(q.pendingNoticesOf("ses_1", "phone"));
      assert.deepEqual(
        [row?.id, row?.kind, row?.reason, row?.createdAt],
        ["ntc_b:phone", "budget", "budget_exhausted", NOW + 3],
      );
      assert.equal(bodyOf(row).text, "Stopped: the budget of 10 is spent.");
      assert.equal((await a.read(q.session("ses_1")))?.notifiedStop, "budget_exhausted");
      const late = { skipped: "stagnation", detail: { unproductiveContinuations: 3 } } as const;
      assert.equal(await a.change(end(ref("cd2"), late, NOW + 4, undefined, undefined, telling("ntc_late"))), false);
      assert.equal(await count("notices"), 1, "the end another writer made first told it; this one tells nothing");
      assert.equal((await a.read(q.session("ses_1")))?.notifiedStop, "budget_exhausted");
    },
  },
  {
    name: "tell-stop: continuations given up are told in a transaction of their own, once, and a new reason is news",
    async run({ a, b, count, trail }) {
      await a.change(skip(S1, NOW, "stagnation", { unproductiveContinuations: 3 }, { tell: telling("ntc_s") }));
      const change = tellStopChange(S1, "gave_up", { failures: 4 }, telling("ntc_g"), NOW + 1);
      assert.equal(change.name, "tell-stop");
      assert.deepEqual(await a.change(change), { news: true, notices: 1, kind: "stuck" });
      const rows = await b.read(q.pendingNoticesOf("ses_1", "hook"));
      assert.deepEqual(
        rows.map((r) => [r.id, r.reason]),
        [
          ["ntc_s:hook", "stagnation"],
          ["ntc_g:hook", "gave_up"],
        ],
      );
      assert.equal(bodyOf(rows[1]).text, "Stopped: sending failed 4 times.");
      assert.equal((await b.read(q.session("ses_1")))?.notifiedStop, "gave_up");
      const again = tellStopChange(S1, "gave_up", { failures: 5 }, telling("ntc_g2"), NOW + 2);
      assert.deepEqual(await a.change(again), { news: false, notices: 0 });
      assert.equal(await count("notices"), 2);
      assert.deepEqual(await trail("ses_1"), ["skipped:stagnation"], "telling writes no audit row of its own");
    },
  },
];
