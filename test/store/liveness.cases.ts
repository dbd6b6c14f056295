// What the port's heartbeats promise on every database: who is alive, and which TUI draws a folder's countdowns.
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { registerOwner, unregisterOwner } from "../../src/store/owner.js";
import { q } from "../../src/store/script.js";
import { ME, NOW, OTHER, type ContractCase } from "./contract-world.js";

export const LIVENESS_CASES: ContractCase[] = [
  {
    name: "liveness: a heartbeat is a row an operator sees; retire removes it; owners judged alive or gone",
    async run({ a, b }) {
      const replicas = await b.replicas();
      const mine = replicas.find((r) => r.id === ME);
      assert.ok(mine, "the heartbeat's row");
      assert.deepEqual([mine.kind, mine.host, mine.pid, mine.leaseMs], ["plugin", "host-a", 1, 15_000]);
      assert.equal(mine.alive, true);
      await a.heartbeat(ME, 15_000);
      assert.equal(a.ownerAlive(OTHER, NOW + 15_000, NOW), true);
      assert.equal(a.ownerAlive(null, null, NOW), false);
      const here = `${hostname()}/${process.pid}/gone`;
      assert.equal(a.ownerAlive(here, NOW + 15_000, NOW), false, "an owner of this process that is not running");
      registerOwner(here);
      try {
        await b.heartbeat(here, 15_000);
        await a.heartbeat(ME, 15_000);
        assert.equal(a.ownerAlive(here, NOW + 15_000, NOW), true);
        assert.equal((await a.liveness())(here), true);
      } finally {
        unregisterOwner(here);
      }
      await b.retire(OTHER);
      assert.equal(
        (await a.replicas()).some((r) => r.id === OTHER),
        false,
      );
    },
  },
  {
    name: "who is there: a TUI's heartbeat says it draws its folder's countdowns, while it is fresh and until retired",
    async run({ a, database }) {
      const tui = await database.open({ kind: "tui" });
      // This process's pid, never registered here: the TUI of an OpenCode whose server plugin runs in a worker.
      const TUI = `${hostname()}/${process.pid}/tui`;
      try {
        assert.equal(await a.read(q.tuiWatching("/p", Date.now())), false, "no TUI yet");
        await tui.heartbeat(TUI, 15_000, "/p");
        assert.equal(await a.read(q.tuiWatching("/p", Date.now())), true);
        await a.heartbeat(ME, 15_000);
        assert.equal(await a.read(q.tuiWatching("/p", Date.now())), true, "kept by another heartbeat of its pid");
        assert.equal(await a.read(q.tuiWatching("/elsewhere", Date.now())), false, "another folder's TUI");
        assert.equal((await a.replicas()).find((r) => r.id === TUI)?.kind, "tui");
        // A plugin's heartbeat names no folder and draws nothing.
        assert.equal(await a.read(q.tuiWatching("", Date.now())), false);
        // A lease that ran out: a TUI that crashed (by the database's clock on PostgreSQL, where `now` is not used).
        await tui.heartbeat(TUI, 1, "/p");
        await new Promise((resolve) => setTimeout(resolve, 20));
        assert.equal(await a.read(q.tuiWatching("/p", Date.now())), false, "a heartbeat past its lease");
        await tui.heartbeat(TUI, 15_000, "/p");
        await tui.retire(TUI);
        assert.equal(await a.read(q.tuiWatching("/p", Date.now())), false, "a TUI that said it is gone");
      } finally {
        await tui.close();
      }
    },
  },
];
