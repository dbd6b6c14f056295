// What arm.ts promises on every database: one armed countdown per session, and an idle answered once.
import assert from "node:assert/strict";
import { arm } from "../../../src/store/changes/arm.js";
import { claim } from "../../../src/store/changes/claim.js";
import { recordOutcome } from "../../../src/store/changes/record-outcome.js";
import { q } from "../../../src/store/script.js";
import { countdown, injection, LATER, ME, NOW, OTHER, POLICY, type ContractCase } from "../contract-world.js";

export const ARM_CASES: ContractCase[] = [
  {
    name: "arm: one armed countdown per session; a new one supersedes, a live foreign owner's is respected",
    async run({ a, b, count, trail }) {
      assert.equal((await a.change(arm(countdown("cd1"), {}))).armed, true);
      assert.equal((await a.read(q.session("ses_1"))) ?? null, null, "arming alone writes no session row");
      const second = await a.change(arm(countdown("cd2", "ses_1", { armedAt: NOW + 1 }), {}));
      assert.equal(second.armed, true);
      assert.equal(second.superseded?.id, "cd1");
      assert.equal((await a.read(q.countdown("cd1")))?.state, "cancelled");
      assert.equal((await a.read(q.countdown("cd1")))?.endReason, "superseded");
      const held = await b.change(arm(countdown("cd3", "ses_1", { owner: OTHER, armedAt: NOW + 2 }), { why: "t" }));
      assert.deepEqual(held, { armed: false, heldBy: { id: "cd2", owner: ME, leaseUntil: NOW + 15_000 } });
      assert.deepEqual(await trail("ses_1"), ["armed", "cancelled:superseded", "armed", "skipped:in_flight"]);
      // Every row about a countdown names it first in its detail.
      const details = await a.reader.all<{ detail: string }>("SELECT detail FROM audit_events ORDER BY id");
      assert.deepEqual(
        details.map((d) => Object.keys(JSON.parse(d.detail) as object)[0]),
        ["countdownId", "countdownId", "countdownId", "countdownId"],
      );
      assert.equal(await count("countdowns WHERE state = 'armed'"), 1);
      await a.change(arm(countdown("cd4", "ses_2"), {}, { sessionPatch: { agent: "build" } }));
      assert.equal((await a.read(q.session("ses_2")))?.agent, "build", "a patch given with the arming writes the row");
    },
  },
  {
    name: "arm: of many processes arming one session at once, each round has one winner",
    async run({ a, b, count }) {
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? a : b).change(arm(countdown(`cd${i}`, "ses_race", { owner: i % 2 ? ME : OTHER }), {})),
        ),
      );
      // Two live owners: a countdown of the other one is respected, one of its own is superseded.
      assert.equal(await count("countdowns WHERE state = 'armed' AND session_id = 'ses_race'"), 1);
      const won = results.filter((r) => r.armed).length;
      assert.equal(await count("countdowns WHERE session_id = 'ses_race'"), won);
    },
  },
  {
    name: "arm: a continuation fired since the idle answers it; refused ones answer nothing",
    async run({ a, b, count }) {
      await a.change(arm(countdown("cd1"), {}));
      assert.equal(await a.change(claim(injection("inj_a", "cd1"), {})), true); // fired at NOW + 2000
      const firedAt = NOW + 2000;
      assert.deepEqual(await b.read(q.continuedSince("ses_1", NOW, LATER)), { injectionId: "inj_a", firedAt });
      assert.deepEqual(await b.read(q.continuedSince("ses_1", firedAt, LATER)), { injectionId: "inj_a", firedAt });
      assert.equal(
        await b.read(q.continuedSince("ses_1", firedAt + 1, firedAt + 1)),
        undefined,
        "a look begun after it",
      );
      assert.equal(await b.read(q.continuedSince("ses_2", NOW, LATER)), undefined);
      const refused = { kind: "failed", error: "refused", final: false, detail: {} } as const;
      await a.change(recordOutcome(injection("inj_a", "cd1"), refused, NOW + 2100, POLICY));
      assert.equal(await b.read(q.continuedSince("ses_1", NOW, LATER)), undefined);
      await a.change(arm(countdown("cd2", "ses_1", { armedAt: NOW + 2200 }), {}));
      await a.change(claim(injection("inj_b", "cd2", { createdAt: NOW + 2500 }), {}));
      const lost = { kind: "unknown", error: "timeout", timedOut: true, final: false, detail: {} } as const;
      await a.change(recordOutcome(injection("inj_b", "cd2"), lost, NOW + 2600, POLICY));
      const answered = { injectionId: "inj_b", firedAt: NOW + 2500 };
      assert.deepEqual(await b.read(q.continuedSince("ses_1", NOW, LATER)), answered);
      const late = countdown("cd3", "ses_1", { owner: OTHER, armedAt: LATER });
      assert.deepEqual(await b.change(arm(late, { trigger: "idle" }, { answeredSince: NOW + 1000 })), {
        armed: false,
        answeredBy: answered,
      });
      assert.equal(await b.read(q.countdown("cd3")), undefined);
      const skips = await a.reader.all<{ detail: string }>(
        "SELECT detail FROM audit_events WHERE event = 'skipped' AND reason = 'in_flight'",
      );
      assert.deepEqual(
        skips.map((r) => JSON.parse(r.detail) as unknown),
        [{ stage: "idle", answeredBy: "inj_b", firedAt: NOW + 2500, trigger: "idle" }],
      );
      // A look that began after the continuation (just now) judges a new idle.
      const next = countdown("cd4", "ses_1", { owner: OTHER, armedAt: NOW + 3000 });
      assert.equal((await b.change(arm(next, {}, { answeredSince: NOW + 3000 }))).armed, true);
      assert.equal(await count("countdowns WHERE state = 'armed'"), 1);
    },
  },
];
