// What renew-leases.ts promises on every database: this owner's armed countdowns, and only those, hold a new lease.
import assert from "node:assert/strict";
import { arm } from "../../../src/store/changes/arm.js";
import { end } from "../../../src/store/changes/end.js";
import { renewLeases } from "../../../src/store/changes/renew-leases.js";
import { q } from "../../../src/store/script.js";
import { countdown, ME, NOW, OTHER, type ContractCase } from "../contract-world.js";

export const RENEW_LEASES_CASES: ContractCase[] = [
  {
    name: "renew-leases: this owner's armed countdowns get the new lease; another owner's and an ended one keep theirs",
    async run({ a, b }) {
      await a.change(arm(countdown("cd1", "ses_1", { owner: ME, leaseUntil: NOW + 1000 }), {}));
      await a.change(arm(countdown("cd2", "ses_2", { owner: ME, leaseUntil: NOW + 1000 }), {}));
      await a.change(arm(countdown("cd3", "ses_3", { owner: OTHER, leaseUntil: NOW + 1000 }), {}));
      const ended = (await a.read(q.countdown("cd2")))!;
      await a.change(end(ended, { cancelled: "user_message", detail: {} }, NOW));
      const endedLease = (await a.read(q.countdown("cd2")))?.leaseUntil;
      assert.equal(await b.change(renewLeases(ME, NOW + 20_000)), 1);
      assert.equal((await a.read(q.countdown("cd1")))?.leaseUntil, NOW + 20_000);
      assert.equal((await a.read(q.countdown("cd2")))?.leaseUntil, endedLease);
      assert.equal((await a.read(q.countdown("cd3")))?.leaseUntil, NOW + 1000);
    },
  },
];
