// What reads.ts promises on every database: what answered an idle since, in one read.
import assert from "node:assert/strict";
import { arm } from "../../src/store/changes/arm.js";
import { cancelByKey } from "../../src/store/changes/cancel-by-key.js";
import { changeSession } from "../../src/store/changes/change-session.js";
import { claim } from "../../src/store/changes/claim.js";
import { sinceIdle } from "../../src/store/reads.js";
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
];
