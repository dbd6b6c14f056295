// What settle-notice.ts promises on every database: what became of a notice is written with the audit row that says
// so — sent (the notices it stood for folded into it; `notified`), failed for now (due again at the retry) or for good
// (`notice_failed`), or held back (no audit row, no attempt counted) — and only by the process that still holds it.
import assert from "node:assert/strict";
import { claimNotices } from "../../../src/store/changes/claim-notices.js";
import { settleNotice } from "../../../src/store/changes/settle-notice.js";
import type { OperatorStore } from "../../../src/store/operator/operator.js";
import type { NoticeRow } from "../../../src/store/schema.js";
import { ME, NOW, OTHER, type ContractCase } from "../contract-world.js";
import { auditedAs, claimWhenFree, insertNotices, newNotice, storedNotice } from "../notice-rows.js";

const P = { directory: "/p" };

/** The notices on `hook`, written and taken by `owner`, by id. */
async function taken(store: OperatorStore, owner: string, ...ids: string[]): Promise<Record<string, NoticeRow>> {
  await insertNotices(store, ...ids.map((id, i) => newNotice(id, NOW - 1000 * (ids.length - i))));
  const rows = await store.change(claimNotices(P, ["hook"], owner, NOW, 60_000, 10));
  return Object.fromEntries(rows.map((r) => [r.id, r]));
}

const of = (row: NoticeRow, attempt: number) => ({
  noticeId: row.noticeId,
  channel: "hook",
  channelType: "webhook",
  attempt,
});

export const SETTLE_NOTICE_CASES: ContractCase[] = [
  {
    name: "settle-notice: sent, with the older ones folded into it and one notified row",
    async run({ a, b, trail }) {
      const rows = await taken(a, ME, "n_1", "n_2", "n_3");
      const outcome = { sent: true, body: '{"sent":true}', folded: ["n_1", "n_2"], deliveryMs: 42 } as const;
      assert.equal(await a.change(settleNotice(rows.n_3!, ME, outcome, "webhook", NOW + 10)), true);
      assert.deepEqual(await storedNotice(b, "n_3"), {
        ...{ id: "n_3", state: "sent", attempts: 1, nextAttemptAt: NOW - 1000, owner: null, sentAt: NOW + 10 },
        ...{ lastError: null, foldedInto: null, body: '{"sent":true}' },
      });
      for (const id of ["n_1", "n_2"]) {
        const folded = await storedNotice(b, id);
        assert.deepEqual(
          [folded?.state, folded?.foldedInto, folded?.owner, folded?.attempts],
          ["folded", "n_3", null, 0],
        );
      }
      assert.deepEqual(await auditedAs(b, "notified"), [
        { sessionId: "ses_1", reason: "stuck", detail: { ...of(rows.n_3!, 1), folded: 2, deliveryMs: 42 } },
      ]);
      assert.deepEqual(await trail("ses_1"), ["notified:stuck"]);
      const held = { heldUntil: NOW + 60_000, why: "newer" };
      assert.equal(await a.change(settleNotice(rows.n_1!, ME, held, "webhook", NOW + 11)), false, "folded: settled");
      assert.equal((await storedNotice(b, "n_1"))?.state, "folded");
    },
  },
  {
    name: "settle-notice: failed for now stays pending until the retry, failed for good is the end, each audited",
    async run({ a, b }) {
      const rows = await taken(a, ME, "n_retry", "n_final");
      const retry = {
        sent: false,
        error: "503 from hooks.example.com",
        retryAt: NOW + 5010,
        body: "{}",
        deliveryMs: 7,
      } as const;
      assert.equal(await a.change(settleNotice(rows.n_retry!, ME, retry, "webhook", NOW + 10)), true);
      const stored = await storedNotice(b, "n_retry");
      assert.deepEqual(
        [stored?.state, stored?.attempts, stored?.nextAttemptAt, stored?.lastError, stored?.owner, stored?.sentAt],
        ["pending", 1, NOW + 5010, "503 from hooks.example.com", null, null],
      );
      const final = { sent: false, error: "404 from hooks.example.com", body: "{}", deliveryMs: 3 } as const;
      assert.equal(await a.change(settleNotice(rows.n_final!, ME, final, "webhook", NOW + 20)), true);
      const given = await storedNotice(b, "n_final");
      assert.deepEqual(
        [given?.state, given?.attempts, given?.nextAttemptAt, given?.lastError],
        ["failed", 1, NOW + 20, "404 from hooks.example.com"],
      );
      assert.deepEqual(await auditedAs(b, "notice_failed"), [
        {
          sessionId: "ses_1",
          reason: "stuck",
          detail: { ...of(rows.n_retry!, 1), error: retry.error, retryInMs: 5000, deliveryMs: 7 },
        },
        {
          sessionId: "ses_1",
          reason: "stuck",
          detail: { ...of(rows.n_final!, 1), error: final.error, final: true, deliveryMs: 3 },
        },
      ]);
      assert.deepEqual(await b.change(claimNotices(P, ["hook"], OTHER, NOW + 5009, 60_000, 10)), [], "not yet due");
      const [again] = await b.change(claimNotices(P, ["hook"], OTHER, NOW + 5010, 60_000, 10));
      assert.deepEqual([again?.id, again?.attempts], ["n_retry", 1], "due at its retry; the given-up one never");
      const twice = { ...retry, retryAt: NOW + 20_000 };
      assert.equal(await b.change(settleNotice(again!, OTHER, twice, "webhook", NOW + 5020)), true);
      assert.equal((await storedNotice(b, "n_retry"))?.attempts, 2, "each attempt counted");
    },
  },
  {
    name: "settle-notice: held back is due later, with no attempt counted and no audit row",
    async run({ a, b, count }) {
      const rows = await taken(a, ME, "n_held");
      const held = { heldUntil: NOW + 3_600_000, why: "rate_limit" };
      assert.equal(await a.change(settleNotice(rows.n_held!, ME, held, "webhook", NOW + 10)), true);
      assert.deepEqual(await storedNotice(b, "n_held"), {
        ...{ id: "n_held", state: "pending", attempts: 0, nextAttemptAt: NOW + 3_600_000, owner: null },
        ...{ sentAt: null, lastError: null, foldedInto: null, body: rows.n_held!.body },
      });
      assert.equal(await count("audit_events"), 0);
      assert.deepEqual(await b.change(claimNotices(P, ["hook"], OTHER, NOW + 3_599_999, 60_000, 10)), []);
    },
  },
  {
    name: "settle-notice: a process whose lease ran out and whose notice another took writes nothing",
    async run({ a, b, count }) {
      await insertNotices(a, newNotice("n_1", NOW - 1000));
      const [mine] = await a.change(claimNotices(P, ["hook"], ME, NOW, 200, 10));
      const [theirs] = await claimWhenFree(b, ["hook"], OTHER, NOW + 201);
      assert.equal(theirs?.id, "n_1");
      const sent = { sent: true, body: '{"late":true}', folded: [], deliveryMs: 1 } as const;
      assert.equal(await a.change(settleNotice(mine!, ME, sent, "webhook", NOW + 300)), false);
      const failed = { sent: false, error: "timeout", retryAt: NOW + 5000, body: "{}", deliveryMs: 1 } as const;
      assert.equal(await a.change(settleNotice(mine!, ME, failed, "webhook", NOW + 301)), false);
      const untouched = await storedNotice(b, "n_1");
      assert.deepEqual(
        [untouched?.state, untouched?.owner, untouched?.attempts, untouched?.sentAt, untouched?.body],
        ["pending", OTHER, 0, null, JSON.stringify({ id: "n_1" })],
      );
      assert.equal(await count("audit_events"), 0);
      assert.equal(await b.change(settleNotice(theirs!, OTHER, sent, "webhook", NOW + 400)), true);
      assert.equal((await storedNotice(a, "n_1"))?.state, "sent");
    },
  },
];
