// What park.ts promises on every database: one park held per session, a second one parking it again in place (its id
// and the time its wait began kept), no park of a stopped session, and a stop that ends the park.
import assert from "node:assert/strict";
import { oweLook } from "../../../src/store/changes/look-owed.js";
import { park } from "../../../src/store/changes/park.js";
import { stop } from "../../../src/store/changes/stop.js";
import { q } from "../../../src/store/script.js";
import { endOfPark, NOW, parkRequest, S1, type ContractCase } from "../contract-world.js";

const HOUR = 3_600_000;

export const PARK_CASES: ContractCase[] = [
  {
    name: "park: parked until its time, its look owed dropped; parked again in place, its id and since kept",
    async run({ a, b, count, trail }) {
      await a.change(oweLook(S1, NOW, { owe: NOW + 100 }));
      assert.deepEqual(await a.change(park(S1, parkRequest("park_1"), NOW + 1)), {
        parked: true,
        id: "park_1",
        repark: false,
      });
      assert.equal((await b.read(q.session("ses_1")))?.recheckAt, null, "a parked session is owed no look");
      assert.deepEqual(await b.read(q.parkOf("ses_1")), {
        ...{ id: "park_1", sessionId: "ses_1", directory: "/p", server: null, reason: "limit", state: "parked" },
        ...{ parkedAt: NOW + 1, wakeAt: NOW + HOUR, since: NOW + 1, backoffMs: null },
        ...{ checkCommand: null, checkEveryMs: null, checkRuns: 0, nextCheckAt: null, checkOutput: null },
        ...{ endedAt: null, endReason: null, owner: null, leaseUntil: null, detail: '{"source":"headers"}' },
      });
      // OpenCode's retry found to be a limit with no time: the backoff's next step, under the same park.
      const backoff = parkRequest("park_2", { wakeAt: NOW + 2 * HOUR, backoffMs: HOUR, detail: { source: "backoff" } });
      assert.deepEqual(await b.change(park(S1, backoff, NOW + 2)), { parked: true, id: "park_1", repark: true });
      assert.deepEqual(await a.read(q.parkOf("ses_1")), {
        ...{ id: "park_1", sessionId: "ses_1", directory: "/p", server: null, reason: "limit", state: "parked" },
        ...{ parkedAt: NOW + 2, wakeAt: NOW + 2 * HOUR, since: NOW + 1, backoffMs: HOUR },
        ...{ checkCommand: null, checkEveryMs: null, checkRuns: 0, nextCheckAt: null, checkOutput: null },
        ...{ endedAt: null, endReason: null, owner: null, leaseUntil: null, detail: '{"source":"backoff"}' },
      });
      assert.equal(await count("parks"), 1);
      assert.deepEqual(await trail("ses_1"), ["parked:limit", "parked:limit"]);
      const details = await a.reader.all<{ detail: string }>("SELECT detail FROM audit_events ORDER BY id");
      assert.deepEqual(
        details.map((d) => JSON.parse(d.detail) as unknown),
        [
          { parkId: "park_1", until: NOW + HOUR, source: "headers" },
          { parkId: "park_1", until: NOW + 2 * HOUR, source: "backoff" },
        ],
      );
    },
  },
  {
    name: "park: the agent's park polls its check, from one step on; a session never seen gets no row of its own",
    async run({ a, b, trail }) {
      const check = { command: "test -f build/done", everyMs: 60_000 };
      const asked = parkRequest("park_1", { reason: "agent", check, detail: { reason: "CI is running" } });
      assert.equal((await a.change(park(S1, asked, NOW))).parked, true);
      const held = await b.read(q.parkOf("ses_1"));
      assert.deepEqual(
        [held?.reason, held?.checkCommand, held?.checkEveryMs, held?.checkRuns, held?.nextCheckAt],
        ["agent", "test -f build/done", 60_000, 0, NOW],
      );
      assert.equal(await b.read(q.session("ses_1")), undefined, "a park carries its own scope");
      assert.deepEqual(await trail("ses_1"), ["parked:agent"]);
      const [row] = await a.reader.all<{ detail: string }>("SELECT detail FROM audit_events");
      assert.deepEqual(JSON.parse(row!.detail), {
        parkId: "park_1",
        until: NOW + HOUR,
        reason: "CI is running",
        check,
      });
      // Parked again with no check asked: none is left of the earlier terms.
      await b.change(park(S1, parkRequest("park_2", { reason: "agent" }), NOW + 1));
      const again = await a.read(q.parkOf("ses_1"));
      assert.deepEqual([again?.id, again?.checkCommand, again?.nextCheckAt], ["park_1", null, null]);
    },
  },
  {
    name: "park: of many processes parking one session at once, one park holds and the others park it again",
    async run({ a, b, count }) {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? a : b).change(park(S1, parkRequest(`park_${i}`, { wakeAt: NOW + HOUR + i }), NOW + i)),
        ),
      );
      assert.ok(results.every((r) => r.parked));
      const first = results.filter((r) => r.parked && !r.repark);
      assert.equal(first.length, 1);
      assert.ok(results.every((r) => r.parked && r.id === first[0]!.id));
      assert.equal(await count("parks"), 1);
      assert.equal(await count("audit_events WHERE event = 'parked'"), 20);
    },
  },
  {
    name: "park: a stop ends the session's park (unparked: stop), and a stopped session is not parked",
    async run({ a, b, count, trail }) {
      await a.change(park(S1, parkRequest("park_1"), NOW));
      const stopped = await b.change(stop(S1, "cli", NOW + 1));
      assert.deepEqual([stopped.changed, stopped.unparked?.id], [true, "park_1"]);
      assert.equal(await a.read(q.parkOf("ses_1")), undefined);
      assert.deepEqual(await endOfPark(a, "park_1"), { state: "unparked", endReason: "stop", endedAt: NOW + 1 });
      assert.deepEqual(await a.change(park(S1, parkRequest("park_2"), NOW + 2)), {
        parked: false,
        because: "stopped",
      });
      assert.equal(await count("parks WHERE state = 'parked'"), 0);
      assert.deepEqual(await trail("ses_1"), ["parked:limit", "stopped:cli", "unparked:stop"]);
      const [unparked] = await a.reader.all<{ detail: string }>(
        "SELECT detail FROM audit_events WHERE event = 'unparked'",
      );
      assert.deepEqual(JSON.parse(unparked!.detail), { parkId: "park_1" });
    },
  },
];
