// What claim.ts promises on every database: one winner among racing claims, in one transaction.
import assert from "node:assert/strict";
import { arm } from "../../../src/store/changes/arm.js";
import { claim } from "../../../src/store/changes/claim.js";
import { q } from "../../../src/store/script.js";
import { countdown, injection, OTHER, type ContractCase } from "../contract-world.js";

export const CLAIM_CASES: ContractCase[] = [
  {
    name: "claim: only the owner, only while armed, one winner among racing claims; one transaction",
    async run({ a, b, count }) {
      await a.change(arm(countdown("cd1"), {}));
      assert.equal(await b.change(claim(injection("i0", "cd1", { owner: OTHER }), {})), false);
      const claims = await Promise.all(["i1", "i2", "i3"].map((id) => a.change(claim(injection(id, "cd1"), {}))));
      assert.equal(claims.filter(Boolean).length, 1);
      assert.equal(await count("injections WHERE countdown_id = 'cd1' AND status = 'pending'"), 1);
      assert.equal((await a.read(q.countdown("cd1")))?.state, "fired");
      assert.equal((await b.read(q.sessionState("ses_1"))).pending, true);
      // An injection that cannot be written (its id taken) rolls the countdown's move to fired back.
      await a.change(arm(countdown("cd2", "ses_2"), {}));
      const taken = injection(claims[0] ? "i1" : claims[1] ? "i2" : "i3", "cd2", { sessionId: "ses_2" });
      await assert.rejects(a.change(claim(taken, {})));
      assert.equal((await a.read(q.countdown("cd2")))?.state, "armed");
      assert.equal(await count("audit_events WHERE event = 'fired'"), 1);
    },
  },
];
