// What adopt.ts promises on every database: an orphan taken once, from the owner it was seen with; the leases
// renewed and released by scope.
import assert from "node:assert/strict";
import { adopt } from "../../../src/store/batches/adopt-orphans.js";
import { adoptChunk, type Orphan } from "../../../src/store/changes/adopt.js";
import { releaseLeases } from "../../../src/store/changes/release-leases.js";
import { renewLeases } from "../../../src/store/changes/renew-leases.js";
import { arm } from "../../../src/store/changes/arm.js";
import { q } from "../../../src/store/script.js";
import { countdown, ME, NOW, OTHER, type ContractCase } from "../contract-world.js";

export const ADOPT_CASES: ContractCase[] = [
  {
    name: "adopt: an orphan is taken once, from the owner it was seen with; renew and release by scope",
    async run({ a, b, count }) {
      await a.change(arm(countdown("cd1", "ses_1", { owner: "gone-host/9/dead", leaseUntil: NOW + 1000 }), {}));
      const row = (await a.read(q.countdown("cd1")))!;
      const orphan: Orphan = { countdown: row, verdict: { action: "rearm", remainingMs: 2000 } };
      const stale: Orphan = { ...orphan, countdown: { ...row, owner: "someone-else/1/x" } };
      const adoption = (owner: string) =>
        ({ reason: "lease_expired", owner, leaseUntil: NOW + 5000, now: NOW, resumeWindowMs: 60_000 }) as const;
      assert.deepEqual(await a.change(adoptChunk([stale], adoption(ME))), [false]);
      const [x, y] = await Promise.all([adopt(a, [orphan], adoption(ME)), adopt(b, [orphan], adoption(OTHER))]);
      assert.equal([...x, ...y].filter(Boolean).length, 1);
      assert.equal(await count("audit_events WHERE event = 'resumed' AND reason = 'lease_expired'"), 1);
      const owner = (await a.read(q.countdown("cd1")))!.owner!;
      assert.ok([ME, OTHER].includes(owner));
      assert.equal(await a.change(renewLeases(owner, NOW + 20_000)), 1);
      assert.equal((await b.read(q.countdown("cd1")))?.leaseUntil, NOW + 20_000);
      assert.equal(await a.change(releaseLeases(owner, { directory: "/other" })), 0);
      assert.equal(await a.change(releaseLeases(owner, { directory: "/p", server: "pod-a" })), 0);
      assert.equal(await a.change(releaseLeases(owner, { directory: "/p" })), 1);
      const released = (await a.read(q.countdown("cd1")))!;
      assert.equal(released.owner, null);
      const expire: Orphan = { countdown: released, verdict: { action: "expire", lateMs: 120_000 } };
      assert.deepEqual(await adopt(b, [expire], adoption(OTHER)), [true]);
      assert.equal((await a.read(q.countdown("cd1")))?.state, "expired");
      const expired = await a.reader.all<{ reason: string; detail: string }>(
        "SELECT reason, detail FROM audit_events WHERE event = 'expired'",
      );
      assert.deepEqual(
        expired.map((e) => [e.reason, JSON.parse(e.detail) as unknown]),
        [
          [
            "stale_after_restart",
            {
              countdownId: "cd1",
              previousOwner: null,
              deadlineAt: NOW + 2000,
              lateMs: 120_000,
              resumeWindowMs: 60_000,
            },
          ],
        ],
      );
    },
  },
  {
    name: "adopt: a batch of orphans seen with several owners, kept and expired, each taken and audited once in order",
    async run({ a, b, count }) {
      const owners = ["gone-host/7/dead", "gone-host/9/dead", "gone-host/8/dead"];
      for (let i = 0; i < 6; i++)
        await a.change(arm(countdown(`cd${i}`, `ses_${i}`, { owner: owners[i % 3]!, leaseUntil: NOW - 1 }), {}));
      const rows = await Promise.all([0, 1, 2, 3, 4, 5].map(async (i) => (await a.read(q.countdown(`cd${i}`)))!));
      const orphans: Orphan[] = rows.map((row, i) => ({
        countdown: row,
        verdict: i % 2 === 0 ? { action: "fire", lateMs: 10 } : { action: "expire", lateMs: 120_000 },
      }));
      // One orphan was seen with an owner it no longer has: not taken, not audited.
      orphans[5] = { ...orphans[5]!, countdown: { ...orphans[5]!.countdown, owner: "someone-else/1/x" } };
      const adoption = (owner: string) =>
        ({ reason: "restart", owner, leaseUntil: NOW + 5000, now: NOW, resumeWindowMs: 60_000 }) as const;
      const [x, y] = await Promise.all([
        a.change(adoptChunk(orphans, adoption(ME))),
        b.change(adoptChunk(orphans, adoption(OTHER))),
      ]);
      assert.deepEqual(
        x.map((taken, i) => taken || y[i]),
        [true, true, true, true, true, false],
      );
      const audited = await a.reader.all<{ event: string; detail: string }>(
        "SELECT event, detail FROM audit_events WHERE event IN ('resumed', 'expired') ORDER BY id",
      );
      assert.deepEqual(
        audited.map((r) => [r.event, (JSON.parse(r.detail) as { countdownId: string }).countdownId]).sort(),
        [
          ["expired", "cd1"],
          ["expired", "cd3"],
          ["resumed", "cd0"],
          ["resumed", "cd2"],
          ["resumed", "cd4"],
        ],
      );
      // Each writer's rows in the orphans' order.
      for (const writer of [x, y]) {
        const mine = audited
          .map((r) => (JSON.parse(r.detail) as { countdownId: string }).countdownId)
          .filter((id) => writer[Number(id.slice(2))]);
        assert.deepEqual(mine, [...mine].sort());
      }
      assert.equal(await count("countdowns WHERE state = 'expired'"), 2);
      assert.equal(await count("countdowns WHERE state = 'armed' AND owner IN ('" + ME + "', '" + OTHER + "')"), 3);
      assert.equal((await a.read(q.countdown("cd5")))?.owner, "gone-host/8/dead");
      const kept = rows.filter((_, i) => i % 2 === 0).map((r) => r.id);
      for (const id of kept) assert.equal((await a.read(q.countdown(id)))?.leaseUntil, NOW + 5000);
    },
  },
];
