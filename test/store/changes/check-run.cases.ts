// What check-run.ts promises on every database: of two processes claiming the same run of a park's check, one gets
// it, and its next run is set a poll interval on; a park over (woken, unparked) has no run to claim; a run that did
// not pass keeps its output on the park, and a park parked again in place starts with none.
import assert from "node:assert/strict";
import { checkFailed, claimCheckRun } from "../../../src/store/changes/check-run.js";
import { park } from "../../../src/store/changes/park.js";
import { unpark } from "../../../src/store/changes/unpark.js";
import { q } from "../../../src/store/script.js";
import { NOW, parkRequest, S1, type ContractCase } from "../contract-world.js";

const check = { command: "test -f build/done", everyMs: 60_000 };

export const CHECK_RUN_CASES: ContractCase[] = [
  {
    name: "check-run: one of two claims a run, its next due a poll interval on; its output kept until parked again",
    async run({ a, b }) {
      await a.change(park(S1, parkRequest("park_1", { reason: "agent", check }), NOW));
      const held = (await a.read(q.parkOf("ses_1")))!;
      const claims = await Promise.all([a, b].map((s) => s.change(claimCheckRun(S1, held, NOW + 60_000))));
      assert.deepEqual(claims.sort(), [false, true]);
      const after = (await b.read(q.parkOf("ses_1")))!;
      assert.deepEqual([after.checkRuns, after.nextCheckAt], [1, NOW + 120_000]);
      assert.equal(await b.change(claimCheckRun(S1, held, NOW + 60_001)), false, "that run was taken");
      assert.equal(await a.change(checkFailed(S1, "park_1", "build running\n")), true);
      assert.equal((await b.read(q.parkOf("ses_1")))?.checkOutput, "build running\n");
      await a.change(park(S1, parkRequest("park_2", { reason: "agent", check }), NOW + 2));
      assert.deepEqual(
        [(await b.read(q.parkOf("ses_1")))?.checkOutput, (await b.read(q.parkOf("ses_1")))?.checkRuns],
        [null, 0],
      );
    },
  },
  {
    name: "check-run: a park over has no run to claim and keeps no output",
    async run({ a, b }) {
      await a.change(park(S1, parkRequest("park_1", { reason: "agent", check }), NOW));
      const held = (await a.read(q.parkOf("ses_1")))!;
      await b.change(unpark(S1, "command", NOW + 1));
      assert.equal(await a.change(claimCheckRun(S1, held, NOW + 60_000)), false);
      assert.equal(await a.change(checkFailed(S1, "park_1", "late")), false);
      const without = (await a.read(q.lastParkOf("ses_1")))!;
      assert.deepEqual([without.checkRuns, without.checkOutput], [0, null]);
      const noCheck = { ...held, checkEveryMs: null };
      assert.equal(await a.change(claimCheckRun(S1, noCheck, NOW)), false);
    },
  },
];
