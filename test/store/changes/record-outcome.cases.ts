// What record-outcome.ts promises on every database: an outcome recorded once per injection.
import assert from "node:assert/strict";
import { arm } from "../../../src/store/changes/arm.js";
import { claim } from "../../../src/store/changes/claim.js";
import { recordOutcome } from "../../../src/store/changes/record-outcome.js";
import { q } from "../../../src/store/script.js";
import { countdown, injection, NOW, POLICY, S1, type ContractCase } from "../contract-world.js";

export const RECORD_OUTCOME_CASES: ContractCase[] = [
  {
    name: "record-outcome: once per injection, with the session's counts and retry plan from its row",
    async run({ a, b, trail }) {
      await a.change(arm(countdown("cd1"), {}));
      await a.change(claim(injection("i1", "cd1"), {}));
      const lost = { kind: "unknown", error: "lost", timedOut: false, final: false, detail: {} } as const;
      const refused = { kind: "failed", error: "lost", final: false, detail: {} } as const;
      const [one, two] = await Promise.all([
        a.change(recordOutcome(injection("i1", "cd1"), lost, NOW + 2100, POLICY)),
        b.change(recordOutcome(injection("i1", "cd1"), refused, NOW + 2100, POLICY)),
      ]);
      assert.equal([one, two].filter(Boolean).length, 1);
      assert.deepEqual((one ?? two)!.next, { retry: true, attempt: 1, delayMs: 5000 });
      assert.equal((await a.read(q.session("ses_1")))?.consecutiveFailures, 1);
      assert.equal((await a.read(q.uncertainIn("ses_1", NOW))).length, 1);
      const arrived = { kind: "arrived", was: one ? "unknown" : "failed" } as const;
      assert.ok(await b.change(recordOutcome(injection("i1", "cd1"), arrived, NOW + 2200, POLICY)));
      assert.equal(await a.change(recordOutcome(injection("i1", "cd1"), arrived, NOW + 2300, POLICY)), undefined);
      const row = (await a.read(q.session("ses_1")))!;
      assert.deepEqual([row.continuations, row.consecutiveFailures], [1, 0]);
      assert.equal((await a.read(q.injection("i1")))?.status, "sent");
      // A continuation sent: one more, and a look owed once its turn should have started.
      await a.change(arm(countdown("cd2", "ses_1", { armedAt: NOW + 3000 }), {}));
      await a.change(claim(injection("i2", "cd2", { createdAt: NOW + 5000 }), {}));
      const sent = { kind: "sent", latencyMs: 12.4, detail: { countdownId: "cd2" } } as const;
      assert.deepEqual(await a.change(recordOutcome(injection("i2", "cd2"), sent, NOW + 5100, POLICY)), {
        next: undefined,
      });
      const afterSent = (await a.read(q.session("ses_1")))!;
      assert.deepEqual([afterSent.continuations, afterSent.recheckAt], [2, NOW + 5100 + 10_000]);
      const notStarted = { kind: "not_started", waitedMs: 10_000 } as const;
      const recorded = await a.change(recordOutcome({ ...S1, id: "i2" }, notStarted, NOW + 16_000, POLICY));
      assert.deepEqual(recorded?.next, { retry: true, attempt: 1, delayMs: 5000 });
      assert.deepEqual(await trail("ses_1"), [
        "armed",
        "fired",
        "injection_failed:retrying",
        "reconciled:found",
        "armed",
        "fired",
        "injected",
        "injection_failed:not_started",
      ]);
      const last = await a.reader.all<{ detail: string }>(
        "SELECT detail FROM audit_events WHERE event = 'injected' ORDER BY id DESC LIMIT 1",
      );
      assert.deepEqual(JSON.parse(last[0]!.detail), { injectionId: "i2", latencyMs: 12, countdownId: "cd2" });
    },
  },
  {
    name: "record-outcome: a pending row left by a dead process is reconciled once, found or not",
    async run({ a, b, trail }) {
      await a.change(arm(countdown("cd1"), {}));
      await a.change(claim(injection("i1", "cd1"), {}));
      const notFound = { kind: "reconciled", found: false, firedAt: NOW + 2000 } as const;
      const [x, y] = await Promise.all([
        a.change(recordOutcome(injection("i1", "cd1"), notFound, NOW + 3000, POLICY)),
        b.change(recordOutcome(injection("i1", "cd1"), notFound, NOW + 3000, POLICY)),
      ]);
      assert.equal([x, y].filter(Boolean).length, 1);
      const row = await a.read(q.injection("i1"));
      assert.deepEqual([row?.status, row?.error], ["unknown", "not found in the session after a restart"]);
      assert.equal((await a.read(q.session("ses_1")))?.continuations, 1, "possibly delivered: counted");
      await a.change(arm(countdown("cd2", "ses_1", { armedAt: NOW + 4000 }), {}));
      await a.change(claim(injection("i2", "cd2", { createdAt: NOW + 4500 }), {}));
      const found = { kind: "reconciled", found: true, firedAt: NOW + 4500 } as const;
      await b.change(recordOutcome(injection("i2", "cd2"), found, NOW + 5000, POLICY));
      assert.equal((await a.read(q.injection("i2")))?.status, "sent");
      // Its turn's idle may have been skipped while it was pending: a look is owed once the turn had time to start.
      assert.equal((await a.read(q.session("ses_1")))?.recheckAt, NOW + 4500 + 10_000);
      assert.deepEqual(
        (await trail("ses_1")).filter((e) => e.startsWith("reconciled")),
        ["reconciled:not_found", "reconciled:found"],
      );
    },
  },
];
