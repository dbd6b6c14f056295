// What cancel-by-key.ts promises on every database, beside the stop that ends a countdown the same way (stop.cases.ts
// has the stop's own case).
import assert from "node:assert/strict";
import { arm } from "../../../src/store/changes/arm.js";
import { cancelByKey } from "../../../src/store/changes/cancel-by-key.js";
import { oweLook } from "../../../src/store/changes/look-owed.js";
import { claim } from "../../../src/store/changes/claim.js";
import { stop } from "../../../src/store/changes/stop.js";
import { q } from "../../../src/store/script.js";
import { countdown, injection, LATER, NOW, S1, type ContractCase } from "../contract-world.js";

export const CANCEL_BY_KEY_CASES: ContractCase[] = [
  {
    name: "cancel-by-key and stop end the armed countdown; the key also drops the look owed",
    async run({ a, b, trail }) {
      await a.change(arm(countdown("cd1"), {}));
      await a.change(oweLook(S1, NOW, { owe: NOW + 5000 }));
      assert.equal((await b.change(cancelByKey(S1, NOW + 1, { via: "escape" })))?.id, "cd1");
      assert.equal((await a.read(q.session("ses_1")))?.recheckAt, null);
      assert.equal(await b.change(cancelByKey(S1, NOW + 2, {})), undefined);
      assert.equal(await a.change(claim(injection("i1", "cd1"), {})), false, "a cancelled countdown cannot fire");
      await a.change(arm(countdown("cd2", "ses_1", { armedAt: NOW + 3 }), {}));
      const stopped = await b.change(stop(S1, "cli", NOW + 4));
      assert.deepEqual(
        { changed: stopped.changed, cancelled: stopped.cancelled?.id },
        { changed: true, cancelled: "cd2" },
      );
      assert.deepEqual(await a.change(stop(S1, "tui", NOW + 5)), { changed: false });
      assert.equal((await a.read(q.session("ses_1")))?.stoppedAt, NOW + 4);
      assert.deepEqual(await trail("ses_1"), [
        "armed",
        "cancelled:user_key",
        "armed",
        "stopped:cli",
        "cancelled:stopped",
      ]);
      // A look that began before the key finds it; one that began after, or another session, does not.
      const keyed = async (sessionId: string, since: number, now: number) =>
        (await a.read(q.sessionState(sessionId, { since, now }))).userCancelledAt;
      assert.equal(await keyed("ses_1", NOW, LATER), NOW + 1);
      assert.equal(await keyed("ses_1", NOW + 2, NOW + 2), undefined);
      assert.equal(await keyed("ses_2", NOW, LATER), undefined);
    },
  },
];
