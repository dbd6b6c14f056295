// What unpark.ts promises on every database: a park ended with no look owed, once whoever ends it first; the session
// then parks anew. How a stop ends a park this same way is in park.cases.ts.
import assert from "node:assert/strict";
import { park } from "../../../src/store/changes/park.js";
import { unpark } from "../../../src/store/changes/unpark.js";
import { q } from "../../../src/store/script.js";
import { endOfPark, NOW, parkRequest, S1, type ContractCase } from "../contract-world.js";

export const UNPARK_CASES: ContractCase[] = [
  {
    name: "unpark: once whoever ends it first, no look owed; nothing parked, nothing written; the session parks anew",
    async run({ a, b, trail }) {
      assert.deepEqual(await a.change(unpark(S1, "user_message", NOW)), { unparked: false });
      assert.deepEqual(await trail("ses_1"), []);
      await a.change(park(S1, parkRequest("park_1"), NOW + 1));
      const reasons = ["user_message", "key", "command", "expired"] as const;
      const results = await Promise.all(
        reasons.map((reason, i) => (i % 2 ? b : a).change(unpark(S1, reason, NOW + 2))),
      );
      const won = results.findIndex((r) => r.unparked);
      assert.equal(results.filter((r) => r.unparked).length, 1);
      assert.deepEqual(await endOfPark(b, "park_1"), { state: "unparked", endReason: reasons[won], endedAt: NOW + 2 });
      assert.deepEqual(await b.read(q.sessionsToRecheck({ directory: "/p" }, NOW + 10_000)), []);
      assert.equal(await a.read(q.parkOf("ses_1")), undefined);
      // A new wait begins: a park of its own, its own since.
      assert.deepEqual(await b.change(park(S1, parkRequest("park_2"), NOW + 3)), {
        parked: true,
        id: "park_2",
        repark: false,
      });
      assert.equal((await a.read(q.parkOf("ses_1")))?.since, NOW + 3);
      assert.deepEqual(await trail("ses_1"), ["parked:limit", `unparked:${reasons[won]}`, "parked:limit"]);
    },
  },
];
