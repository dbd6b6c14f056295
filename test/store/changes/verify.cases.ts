// What verify.ts promises on every database: of two processes starting a session's check, one runs it; a run ends
// once, and only as its owner's (a person's cancel aside); a run that ended owes the session a look; its failures
// since the last real user message are counted, and a failure like the one before it, with no file changed between,
// is said to repeat it.
import assert from "node:assert/strict";
import { changeSession } from "../../../src/store/changes/change-session.js";
import {
  cancelVerification,
  endVerification,
  interruptVerification,
  renewVerification,
  startVerification,
  type RunOutcome,
} from "../../../src/store/changes/verify.js";
import { stop } from "../../../src/store/changes/stop.js";
import { q } from "../../../src/store/script.js";
import type { NewVerification } from "../../../src/store/types.js";
import { ME, NOW, OTHER, S1, type ContractCase } from "../contract-world.js";

const run = (id: string, at: number, extra: Partial<NewVerification> = {}): NewVerification => ({
  ...S1,
  id,
  command: "npm test",
  afterContinuations: 2,
  startedAt: at,
  ledgerHash: "ledger-1",
  owner: ME,
  leaseUntil: at + 30_000,
  ...extra,
});
const failed = (output: string): RunOutcome => ({
  passed: false,
  failure: "exit",
  exitCode: 1,
  durationMs: 900,
  output,
});
const ended = (id: string, ledgerHash = "ledger-1") => ({ id, owner: ME, command: "npm test", ledgerHash });

export const VERIFY_CASES: ContractCase[] = [
  {
    name: "verify: of two processes starting a session's check, one runs it; it ends once, as its owner's",
    async run({ a, b, trail }) {
      await a.change(changeSession(S1, NOW, { continuations: 2 }));
      const starts = await Promise.all([
        a.change(startVerification(run("ver_a", NOW), NOW)),
        b.change(startVerification(run("ver_b", NOW, { owner: OTHER }), NOW)),
      ]);
      assert.deepEqual([...starts].sort(), [false, true]);
      const winner = starts[0] ? "ver_a" : "ver_b";
      const owner = starts[0] ? ME : OTHER;
      assert.equal((await b.read(q.latestVerification("ses_1")))?.state, "running");
      const passed: RunOutcome = { passed: true, exitCode: 0, durationMs: 41_000, output: "ok" };
      const by = { ...ended(winner), owner: owner === ME ? OTHER : ME };
      assert.equal(await a.change(endVerification(S1, by, passed, NOW + 41_000)), false, "not its owner's");
      assert.equal(await a.change(endVerification(S1, { ...by, owner }, passed, NOW + 41_000)), true);
      assert.equal(await b.change(endVerification(S1, { ...by, owner }, passed, NOW + 41_001)), false, "ended once");
      const latest = (await b.read(q.latestVerification("ses_1")))!;
      assert.deepEqual(
        [latest.id, latest.state, latest.exitCode, latest.durationMs, latest.failures, latest.repeated],
        [winner, "passed", 0, 41_000, 0, false],
      );
      assert.equal(latest.leaseUntil, null);
      assert.deepEqual(await trail("ses_1"), ["verify_started", "verified"]);
      assert.equal((await b.read(q.session("ses_1")))?.recheckAt, NOW + 41_000, "a look owed now");
    },
  },
  {
    name: "verify: failures since the last user message are counted; the same one with no file changed repeats",
    async run({ a, b, trail }) {
      await a.change(changeSession(S1, NOW, { continuations: 1, lastUserMessageAt: NOW - 1000 }));
      let continuations = 1;
      const fail = async (id: string, at: number, output: string, ledgerHash = "ledger-1") => {
        // A continuation went out after the run before (the one its failure asked for): the work is new.
        await a.change(changeSession(S1, at, { continuations: ++continuations }));
        const checked = run(id, at, { ledgerHash, afterContinuations: continuations });
        assert.equal(await a.change(startVerification(checked, at)), true);
        assert.equal(await a.change(endVerification(S1, ended(id, ledgerHash), failed(output), at + 900)), true);
        return (await b.read(q.latestVerification("ses_1")))!;
      };
      const first = await fail("ver_1", NOW, "1 failed");
      assert.deepEqual([first.state, first.failures, first.repeated], ["failed", 1, false]);
      const changedFiles = await fail("ver_2", NOW + 10_000, "1 failed", "ledger-2");
      assert.deepEqual([changedFiles.failures, changedFiles.repeated], [2, false], "files changed between");
      const same = await fail("ver_3", NOW + 20_000, "1 failed", "ledger-2");
      assert.deepEqual([same.failures, same.repeated], [3, true]);
      // A person wrote since: the count starts over.
      await a.change(changeSession(S1, NOW + 25_000, { lastUserMessageAt: NOW + 25_000 }));
      const afresh = await fail("ver_4", NOW + 30_000, "1 failed", "ledger-2");
      assert.deepEqual([afresh.failures, afresh.repeated], [1, false]);
      assert.equal((await b.read(q.latestFailedVerification("ses_1")))?.id, "ver_4");
      assert.deepEqual(await trail("ses_1"), [
        "verify_started",
        "verify_failed:exit",
        "verify_started",
        "verify_failed:exit",
        "verify_started",
        "verify_failed:exit",
        "verify_started",
        "verify_failed:exit",
      ]);
    },
  },
  {
    name: "verify: a run that stands for the work as it is is not started again; one cancelled or interrupted is",
    async run({ a, b, trail }) {
      await a.change(changeSession(S1, NOW, { continuations: 2 }));
      assert.equal(await a.change(startVerification(run("ver_1", NOW), NOW)), true);
      const passed: RunOutcome = { passed: true, exitCode: 0, durationMs: 5, output: "ok" };
      assert.equal(await a.change(endVerification(S1, ended("ver_1"), passed, NOW + 5)), true);
      // A look that read the session before that run ended asks again: the passed run stands.
      assert.equal(await b.change(startVerification(run("ver_2", NOW + 6, { owner: OTHER }), NOW + 6)), false);
      // Another continuation went out: the work is new, and so is its check.
      await a.change(changeSession(S1, NOW + 10, { continuations: 3 }));
      assert.equal(await b.change(startVerification(run("ver_3", NOW + 20, { owner: OTHER }), NOW + 20)), true);
      const running = (await a.read(q.latestVerification("ses_1")))!;
      assert.equal(running.afterContinuations, 3, "counted from the session as it is");
      // Its process died: whoever finds it interrupts it, and the session is owed the look that runs it again.
      assert.equal(await a.change(interruptVerification(S1, running, "restart", NOW + 30)), true);
      assert.equal(await a.change(interruptVerification(S1, running, "restart", NOW + 31)), false, "once");
      assert.equal((await b.read(q.session("ses_1")))?.recheckAt, NOW + 30);
      assert.equal(await a.change(startVerification(run("ver_4", NOW + 40), NOW + 40)), true);
      assert.equal((await b.read(q.session("ses_1")))?.recheckAt, null, "the look that started it is made");
      assert.deepEqual(await trail("ses_1"), [
        "verify_started",
        "verified",
        "verify_started",
        "resumed:restart",
        "verify_started",
      ]);
      const interrupted = (await b.read(q.runningVerificationsIn(S1))).map((r) => r.id);
      assert.deepEqual(interrupted, ["ver_4"]);
    },
  },
  {
    name: "verify: a person's cancel or a stop ends the running check from any process; its owner's lease ends there",
    async run({ a, b, trail }) {
      await a.change(changeSession(S1, NOW, { continuations: 1 }));
      assert.equal(await a.change(startVerification(run("ver_1", NOW, { afterContinuations: 1 }), NOW)), true);
      assert.equal(await a.change(renewVerification({ id: "ver_1", owner: ME }, NOW + 60_000)), true);
      assert.equal(await a.change(renewVerification({ id: "ver_1", owner: OTHER }, NOW + 60_000)), false);
      const cancelled = await b.change(cancelVerification(S1, "user_message", NOW + 1000));
      assert.equal(cancelled?.id, "ver_1");
      assert.equal(await b.change(cancelVerification(S1, "user_message", NOW + 1001)), undefined, "once");
      assert.equal(await a.change(renewVerification({ id: "ver_1", owner: ME }, NOW + 90_000)), false, "not its own");
      const row = (await a.read(q.latestVerification("ses_1")))!;
      assert.deepEqual([row.state, row.durationMs, row.failures, row.leaseUntil], ["cancelled", 1000, 0, null]);
      // A stop cancels a running one in the same change.
      await a.change(changeSession(S1, NOW + 2000, { continuations: 2 }));
      assert.equal(await a.change(startVerification(run("ver_2", NOW + 2000), NOW + 2000)), true);
      await b.change(stop(S1, "cli", NOW + 3000));
      assert.equal((await a.read(q.latestVerification("ses_1")))?.state, "cancelled");
      assert.deepEqual(await trail("ses_1"), [
        "verify_started",
        "cancelled:user_message",
        "verify_started",
        "stopped:cli",
        "cancelled:stopped",
      ]);
    },
  },
];
