// What claim-notices.ts promises on every database: a sender takes only the notices that are its to send — pending,
// due, of its scope, on its channels — earliest due first and no more than it asked; and a notice one process holds is
// not taken by another until that lease has run out.
import assert from "node:assert/strict";
import { claimNotices } from "../../../src/store/changes/claim-notices.js";
import { settleNotice } from "../../../src/store/changes/settle-notice.js";
import { ME, NOW, OTHER, type ContractCase } from "../contract-world.js";
import { claimWhenFree, insertNotices, newNotice, storedNotice } from "../notice-rows.js";

const P = { directory: "/p" };
const ids = (rows: ReadonlyArray<{ id: string }>) => rows.map((r) => r.id).sort();

export const CLAIM_NOTICES_CASES: ContractCase[] = [
  {
    name: "claim-notices: only pending, due, in scope and on the channels asked for",
    async run({ a, b }) {
      await insertNotices(
        a,
        newNotice("n_due", NOW - 1000),
        newNotice("n_later", NOW + 1000),
        newNotice("n_other_channel", NOW - 1000, { channel: "slack" }),
        newNotice("n_other_folder", NOW - 1000, { directory: "/q" }),
        newNotice("n_other_pod", NOW - 1000, { server: "pod-a" }),
        newNotice("n_sent", NOW - 2000),
      );
      const [sent] = await a.change(claimNotices(P, ["hook"], ME, NOW - 2000, 60_000, 1));
      assert.equal(sent?.id, "n_sent");
      const delivered = { sent: true, body: sent.body, folded: [], deliveryMs: 1 } as const;
      assert.equal(await a.change(settleNotice(sent, ME, delivered, "webhook", NOW - 1500)), true);
      const taken = await b.change(claimNotices(P, ["hook", "ntfy"], OTHER, NOW, 60_000, 10));
      assert.deepEqual(ids(taken), ["n_due"]);
      assert.deepEqual(
        taken.map((r) => [r.owner, r.state, r.attempts]),
        [[OTHER, "pending", 0]],
      );
      assert.equal((await storedNotice(a, "n_due"))?.owner, OTHER);
      assert.deepEqual(ids(await b.change(claimNotices(P, ["slack"], OTHER, NOW, 60_000, 10))), ["n_other_channel"]);
      const pod = { directory: "/p", server: "pod-a" };
      assert.deepEqual(ids(await b.change(claimNotices(pod, ["hook"], OTHER, NOW, 60_000, 10))), ["n_other_pod"]);
      assert.deepEqual(ids(await b.change(claimNotices(P, ["hook"], OTHER, NOW + 1000, 60_000, 10))), ["n_later"]);
      assert.deepEqual(await b.change(claimNotices(P, [], OTHER, NOW + 1000, 60_000, 10)), [], "no channel, nothing");
      assert.equal((await storedNotice(a, "n_other_folder"))?.owner, null, "another folder's is never this scope's");
    },
  },
  {
    name: "claim-notices: earliest due first, no more than the limit",
    async run({ a }) {
      await insertNotices(
        a,
        newNotice("n_2", NOW - 2000),
        newNotice("n_4", NOW - 4000),
        newNotice("n_1", NOW - 1000),
        newNotice("n_3", NOW - 3000),
      );
      const first = await a.change(claimNotices(P, ["hook"], ME, NOW, 60_000, 3));
      assert.deepEqual(
        first.map((r) => r.id),
        ["n_4", "n_3", "n_2"],
        "the earliest due, in the order they came due",
      );
      assert.deepEqual(ids(await a.change(claimNotices(P, ["hook"], ME, NOW, 60_000, 5))), ["n_1"]);
    },
  },
  {
    name: "claim-notices: a notice held is not taken by another process until its lease has run out",
    async run({ a, b }) {
      await insertNotices(a, newNotice("n_long", NOW - 1000), newNotice("n_short", NOW - 1000, { channel: "ntfy" }));
      assert.deepEqual(ids(await a.change(claimNotices(P, ["hook"], ME, NOW, 60_000, 10))), ["n_long"]);
      assert.deepEqual(await b.change(claimNotices(P, ["hook"], OTHER, NOW, 60_000, 10)), [], "held for a minute");
      assert.deepEqual(await a.change(claimNotices(P, ["hook"], ME, NOW, 60_000, 10)), [], "even by its holder");
      // A lease of 200 ms: on SQLite the claim's own clock is past it, on PostgreSQL the database's clock passes it.
      assert.deepEqual(ids(await a.change(claimNotices(P, ["ntfy"], ME, NOW, 200, 10))), ["n_short"]);
      const taken = await claimWhenFree(b, ["hook", "ntfy"], OTHER, NOW + 201);
      assert.deepEqual(ids(taken), ["n_short"], "the notice whose lease ran out, not the one still held");
      assert.deepEqual(
        [(await storedNotice(a, "n_short"))?.owner, (await storedNotice(a, "n_long"))?.owner],
        [OTHER, ME],
      );
    },
  },
];
