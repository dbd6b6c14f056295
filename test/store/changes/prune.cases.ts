// What prune.ts promises on every database: settled history goes, what is live stays.
import assert from "node:assert/strict";
import { arm } from "../../../src/store/changes/arm.js";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { end } from "../../../src/store/changes/end.js";
import { park } from "../../../src/store/changes/park.js";
import { prune } from "../../../src/store/batches/prune-history.js";
import { recordBill } from "../../../src/store/changes/record-bill.js";
import { unpark } from "../../../src/store/changes/unpark.js";
import { endVerification, startVerification } from "../../../src/store/changes/verify.js";
import { wake } from "../../../src/store/changes/wake.js";
import { change, q } from "../../../src/store/script.js";
import { countdown, NOW, parkRequest, type ContractCase } from "../contract-world.js";

export const PRUNE_CASES: ContractCase[] = [
  {
    name: "prune: settled history older than the cutoff goes; what is still live stays",
    async run({ a, b }) {
      await a.change(arm(countdown("cd1", "ses_1", { armedAt: 1000, deadlineAt: 2000 }), {}));
      await a.change(arm(countdown("cd2", "ses_2", { armedAt: 1000, deadlineAt: 2000 }), {}));
      await a.change(end({ id: "cd2", sessionId: "ses_2", directory: "/p" }, { expired: {} }, 1500));
      await a.change(changeSession({ sessionId: "ses_3", directory: "/p" }, 1000, { deletedAt: 1200 }));
      const bill = (injectionId: string, recordedAt: number) => ({
        injectionId,
        sessionId: "ses_2",
        directory: "/p",
        messageId: `msg_${injectionId}`,
        continuedAt: recordedAt - 10,
        recordedAt,
        outcome: "completed" as const,
      });
      await a.change(recordBill({ sessionId: "ses_2", directory: "/p" }, bill("i_old", 1000), 1000));
      await a.change(recordBill({ sessionId: "ses_2", directory: "/p" }, bill("i_new", NOW), NOW));
      const notice = (id: string) => ({
        ...{ id, noticeId: id, sessionId: "ses_2", directory: "/p", channel: "hook" },
        ...{ kind: "stuck", reason: "stagnation", createdAt: 1000, body: "{}" },
      });
      await a.change(change("test", undefined, () => q.insertNotices([notice("n_sent"), notice("n_pending")])));
      await a.change(
        change("test", undefined, function* () {
          yield* q.claimNotices({ directory: "/p" }, ["hook"], "me", 1000, 60_000, 2);
          const sent = { state: "sent" as const, attempts: 1, nextAttemptAt: 1000, sentAt: 1100, lastError: null };
          yield* q.settleNotice("n_sent", "me", { ...sent, body: "{}" }, 1100);
        }),
      );
      const dry = await prune(b, { cutoff: NOW, dryRun: true });
      assert.deepEqual([dry.countdowns, dry.sessions, dry.auditEvents, dry.bills, dry.notices], [1, 1, 3, 1, 1]);
      const report = await prune(b, { cutoff: NOW, batchSize: 2, pauseMs: 0 });
      assert.deepEqual(
        [report.countdowns, report.sessions, report.auditEvents, report.bills, report.notices],
        [1, 1, 3, 1, 1],
      );
      // Two batches for the three audit rows, one for each other table (the parks' and the checks' find none).
      assert.equal(report.batches, 9);
      const notices = await a.reader.all<{ id: string }>("SELECT id FROM notices");
      assert.deepEqual(
        notices.map((r) => r.id),
        ["n_pending"],
        "a notice still to be delivered is never history",
      );
      const bills = await a.reader.all<{ id: string }>("SELECT injection_id AS id FROM continuation_bills");
      assert.deepEqual(
        bills.map((r) => r.id),
        ["i_new"],
      );
      assert.ok(await a.read(q.countdown("cd1")), "armed countdowns are never history");
      assert.equal(await a.read(q.countdown("cd2")), undefined);
    },
  },
  {
    name: "prune: a park ended before the cutoff goes, woken or dropped; one that holds stays however old",
    async run({ a, b }) {
      const scope = (sessionId: string) => ({ sessionId, directory: "/p" });
      for (const [n, at] of [1000, 1000, 1000, NOW - 10, NOW].entries())
        await a.change(park(scope(`ses_${n}`), parkRequest(`park_${n}`, { wakeAt: at + 500 }), at));
      await a.change(wake(scope("ses_0"), "time", 1500));
      await a.change(unpark(scope("ses_1"), "user_message", 1600));
      await a.change(unpark(scope("ses_3"), "user_message", NOW + 1)); // ended after the cutoff
      assert.equal((await prune(b, { cutoff: NOW, dryRun: true })).parks, 2);
      assert.equal((await prune(b, { cutoff: NOW, pauseMs: 0 })).parks, 2);
      const left = await a.reader.all<{ id: string }>("SELECT id FROM parks ORDER BY id");
      assert.deepEqual(
        left.map((r) => r.id),
        ["park_2", "park_3", "park_4"],
      );
    },
  },
  {
    name: "prune: a check that ended before the cutoff goes; one still running stays however old",
    async run({ a, b }) {
      const scope = { sessionId: "ses_1", directory: "/p" };
      const run = (id: string, at: number) => ({
        ...scope,
        ...{ id, command: "npm test", afterContinuations: 0, startedAt: at, ledgerHash: null },
        ...{ owner: "me", leaseUntil: at + 1000 },
      });
      await a.change(startVerification(run("ver_old", 1000), 1000));
      const passed = { passed: true, exitCode: 0, durationMs: 5, output: "ok" } as const;
      await a.change(
        endVerification(scope, { id: "ver_old", owner: "me", command: "npm test", ledgerHash: null }, passed, 1005),
      );
      await a.change(changeSession(scope, 1010, { continuations: 1 }));
      await a.change(startVerification(run("ver_running", 1020), 1020));
      assert.equal((await prune(b, { cutoff: NOW, dryRun: true })).verifications, 1);
      assert.equal((await prune(b, { cutoff: NOW, pauseMs: 0 })).verifications, 1);
      const left = await a.reader.all<{ id: string }>("SELECT id FROM verifications");
      assert.deepEqual(
        left.map((r) => r.id),
        ["ver_running"],
      );
    },
  },
];
