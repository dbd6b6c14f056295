// What wake.ts promises on every database: a park woken once whoever wakes it first, the session then owed a look at
// once (the engine's way to a normal countdown) and left a note of why, and a time or a check waking only the park it
// is for.
import assert from "node:assert/strict";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { park } from "../../../src/store/changes/park.js";
import { wake } from "../../../src/store/changes/wake.js";
import { q } from "../../../src/store/script.js";
import { endOfPark, NOW, parkRequest, S1, type ContractCase } from "../contract-world.js";

export const WAKE_CASES: ContractCase[] = [
  {
    name: "wake: once whoever wakes it first, the session owed a look at once; a time not come yet wakes nothing",
    async run({ a, b, trail }) {
      await a.change(park(S1, parkRequest("park_1", { wakeAt: NOW + 1000 }), NOW));
      const early = await b.change(wake(S1, "time", NOW + 999));
      assert.deepEqual([early.woke, early.park?.id], [false, "park_1"], "its timer was set for an earlier park");
      const causes = ["time", "command", "time", "palette"] as const;
      const results = await Promise.all(causes.map((cause, i) => (i % 2 ? b : a).change(wake(S1, cause, NOW + 1000))));
      const won = results.findIndex((r) => r.woke);
      assert.equal(results.filter((r) => r.woke).length, 1);
      assert.deepEqual([results[won]?.park?.id, results[won]?.park?.since], ["park_1", NOW]);
      assert.equal(await a.read(q.parkOf("ses_1")), undefined);
      assert.deepEqual(await endOfPark(b, "park_1"), { state: "woke", endReason: causes[won], endedAt: NOW + 1000 });
      assert.deepEqual(await b.read(q.sessionsToRecheck({ directory: "/p" }, NOW + 1000)), [
        { sessionId: "ses_1", recheckAt: NOW + 1000, owedSince: null },
      ]);
      assert.deepEqual(await a.change(wake(S1, "command", NOW + 1001)), { woke: false });
      assert.deepEqual(await trail("ses_1"), ["parked:limit", `woke:${causes[won]}`]);
    },
  },
  {
    name: "wake: a check wakes only a park that polls one, a person any; nothing parked, nothing written",
    async run({ a, b, count, trail }) {
      assert.deepEqual(await a.change(wake(S1, "palette", NOW)), { woke: false });
      assert.equal(await a.read(q.session("ses_1")), undefined, "no look owed to a session with no park");
      await a.change(park(S1, parkRequest("park_1"), NOW));
      assert.equal((await b.change(wake(S1, "check", NOW + 1))).woke, false, "its check was an earlier park's");
      assert.equal((await b.change(wake(S1, "palette", NOW + 2))).woke, true);
      const S2 = { ...S1, sessionId: "ses_2" };
      const check = { command: "curl -fs localhost:8080/health", everyMs: 30_000 };
      await a.change(park(S2, parkRequest("park_2", { reason: "agent", check }), NOW + 3));
      const woke = await b.change(wake(S2, "check", NOW + 4, { output: "ok" }));
      assert.deepEqual([woke.woke, woke.park?.checkCommand], [true, check.command]);
      const [row] = await a.reader.all<{ detail: string }>(
        "SELECT detail FROM audit_events WHERE session_id = 'ses_2' AND event = 'woke'",
      );
      assert.deepEqual(JSON.parse(row!.detail), { parkId: "park_2", output: "ok" });
      // Each woken session keeps why, for its next continuation to say (core/wake-note.ts).
      assert.deepEqual(JSON.parse((await a.read(q.session("ses_1")))!.wakeNote!), { kind: "person" });
      assert.deepEqual(JSON.parse((await a.read(q.session("ses_2")))!.wakeNote!), {
        kind: "check_passed",
        reason: "",
        command: check.command,
        output: "ok",
      });
      assert.deepEqual(await trail("ses_1"), ["parked:limit", "woke:palette"]);
      assert.equal(await count("parks WHERE state = 'woke'"), 2);
    },
  },
  {
    name: "wake: a session with a row of its own keeps every other column; the look owed and the note are written",
    async run({ a, b }) {
      await a.change(changeSession(S1, NOW - 10, { continuations: 3, agent: "build" }));
      await a.change(park(S1, parkRequest("park_1"), NOW));
      const woke = await b.change(wake(S1, "command", NOW + 5));
      assert.deepEqual(woke.owed, { sessionId: "ses_1", recheckAt: NOW + 5, owedSince: null });
      const row = (await a.read(q.session("ses_1")))!;
      assert.deepEqual(
        [row.continuations, row.agent, row.recheckAt, row.owedSince, row.updatedAt, JSON.parse(row.wakeNote!)],
        [3, "build", NOW + 5, null, NOW + 5, { kind: "person" }],
      );
    },
  },
];
