// What release-leases.ts promises on every database: this owner's armed countdowns of the scopes named are handed back
// (no owner), for a successor to adopt at once; other scopes and other owners keep theirs.
import assert from "node:assert/strict";
import { arm } from "../../../src/store/changes/arm.js";
import { releaseLeases } from "../../../src/store/changes/release-leases.js";
import { q } from "../../../src/store/script.js";
import { countdown, ME, NOW, OTHER, type ContractCase } from "../contract-world.js";

export const RELEASE_LEASES_CASES: ContractCase[] = [
  {
    name: "release-leases: this owner's countdowns of the scope lose their owner; other scopes and owners keep theirs",
    async run({ a }) {
      await a.change(arm(countdown("cd1", "ses_1", { owner: ME, leaseUntil: NOW + 1000 }), {}));
      await a.change(
        arm(countdown("cd2", "ses_2", { owner: ME, directory: "/elsewhere", leaseUntil: NOW + 1000 }), {}),
      );
      await a.change(arm(countdown("cd3", "ses_3", { owner: OTHER, leaseUntil: NOW + 1000 }), {}));
      assert.equal(await a.change(releaseLeases(ME, { directory: "/p", server: "pod-a" })), 0);
      assert.equal(await a.change(releaseLeases(ME, { directory: "/p" })), 1);
      assert.equal((await a.read(q.countdown("cd1")))?.owner, null);
      assert.equal((await a.read(q.countdown("cd2")))?.owner, ME);
      assert.equal((await a.read(q.countdown("cd3")))?.owner, OTHER);
      assert.equal((await a.read(q.countdown("cd1")))?.state, "armed");
    },
  },
  {
    name: "release-leases: several scopes at once (the servers a fleet replica let go), and none",
    async run({ a }) {
      const at = (id: string, directory: string, server: string | null, owner = ME) =>
        a.change(arm(countdown(id, `ses_${id}`, { owner, directory, server, leaseUntil: NOW + 1000 }), {}));
      await at("cd1", "/w", "pod-a");
      await at("cd2", "/w", "pod-b");
      await at("cd3", "/w", "pod-c");
      await at("cd4", "/p", null);
      await at("cd5", "/w", "pod-a", OTHER);
      assert.equal(await a.change(releaseLeases(ME, [])), 0);
      const scopes = [
        { directory: "/w", server: "pod-a" },
        { directory: "/w", server: "pod-b" },
        { directory: "/p", server: null },
      ];
      assert.equal(await a.change(releaseLeases(ME, scopes)), 3);
      const owners = await Promise.all(["cd1", "cd2", "cd3", "cd4", "cd5"].map((id) => a.read(q.countdown(id))));
      assert.deepEqual(
        owners.map((row) => row?.owner),
        [null, null, ME, null, OTHER],
      );
    },
  },
];
