// What end.ts promises on every database: a countdown ends once.
import assert from "node:assert/strict";
import { arm } from "../../../src/store/changes/arm.js";
import { end } from "../../../src/store/changes/end.js";
import { q } from "../../../src/store/script.js";
import { countdown, NOW, type ContractCase } from "../contract-world.js";

export const END_CASES: ContractCase[] = [
  {
    name: "end: once; a second end writes nothing, and its session change applies all the same",
    async run({ a, trail }) {
      await a.change(arm(countdown("cd1"), {}));
      const ref = { id: "cd1", sessionId: "ses_1", directory: "/p" };
      assert.equal(await a.change(end(ref, { cancelled: "user_message" }, NOW + 1)), true);
      const expired = { expired: { lateMs: 1 } };
      assert.equal(await a.change(end(ref, expired, NOW + 2, { recoveringSince: NOW })), false);
      assert.equal((await a.read(q.countdown("cd1")))?.endReason, "user_message");
      assert.equal((await a.read(q.session("ses_1")))?.recoveringSince, NOW);
      await a.change(arm(countdown("cd2", "ses_1", { armedAt: NOW + 3 }), {}));
      const skipped = { skipped: "todos_complete", detail: { stage: "deadline" } } as const;
      assert.equal(await a.change(end({ ...ref, id: "cd2" }, skipped, NOW + 4)), true);
      assert.equal((await a.read(q.countdown("cd2")))?.endReason, "todos_complete");
      assert.deepEqual(await trail("ses_1"), ["armed", "cancelled:user_message", "armed", "skipped:todos_complete"]);
    },
  },
];
