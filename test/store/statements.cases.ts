// What the statements (src/store/statements.ts) promise on every database beyond one change script: a scope's rows
// never seen from another, several scopes' rows read at once, the continuations still unbilled, the parks due.
import assert from "node:assert/strict";
import { releaseLeases } from "../../src/store/changes/release-leases.js";
import { arm } from "../../src/store/changes/arm.js";
import { oweLook } from "../../src/store/changes/look-owed.js";
import { park } from "../../src/store/changes/park.js";
import { claim } from "../../src/store/changes/claim.js";
import { recordBill } from "../../src/store/changes/record-bill.js";
import { recordOutcome } from "../../src/store/changes/record-outcome.js";
import { wake } from "../../src/store/changes/wake.js";
import { auditRow } from "../../src/store/audit-row.js";
import { leaseRowsIn } from "../../src/store/reads.js";
import { change, q } from "../../src/store/script.js";
import type { ParkEnding, Scope } from "../../src/store/types.js";
import { countdown, injection, ME, NOW, parkRequest, POLICY, S1, type ContractCase } from "./contract-world.js";

export const STATEMENTS_CASES: ContractCase[] = [
  {
    name: "unbilled: the scope's continuations that went out without a bill, oldest first, from a time on",
    async run({ a, b }) {
      const sent = { kind: "sent", latencyMs: 5, detail: {} } as const;
      const fire = async (n: number, sessionId: string, settle: boolean) => {
        await a.change(arm(countdown(`cd${n}`, sessionId), {}));
        await a.change(claim(injection(`i${n}`, `cd${n}`, { sessionId, createdAt: NOW + n }), {}));
        if (settle) await a.change(recordOutcome(injection(`i${n}`, `cd${n}`, { sessionId }), sent, NOW + 10, POLICY));
      };
      await fire(1, "ses_1", true);
      await fire(2, "ses_2", true);
      await fire(3, "ses_3", false); // still pending: its call is under way
      await fire(4, "ses_4", true);
      await b.change(
        recordBill(
          { sessionId: "ses_2", directory: "/p" },
          {
            injectionId: "i2",
            sessionId: "ses_2",
            directory: "/p",
            messageId: "msg_i2",
            continuedAt: NOW + 2,
            recordedAt: NOW + 20,
            outcome: "completed",
          },
          NOW + 20,
        ),
      );
      assert.deepEqual(await b.read(q.unbilledIn({ directory: "/p" }, NOW)), [
        { injectionId: "i1", sessionId: "ses_1" },
        { injectionId: "i4", sessionId: "ses_4" },
      ]);
      assert.deepEqual(await a.read(q.unbilledIn({ directory: "/p" }, NOW + 2)), [
        { injectionId: "i4", sessionId: "ses_4" },
      ]);
      assert.deepEqual(await a.read(q.unbilledIn({ directory: "/elsewhere" }, NOW)), []);
    },
  },
  {
    name: "scopes: pods that share a directory path never see each other's rows",
    async run({ a, b, count }) {
      const scopes = [{ server: null }, { server: "pod-a" }, { server: "pod-b" }] as const;
      for (const [i, { server }] of scopes.entries()) {
        const sessionId = `ses_${i}`;
        await a.change(arm(countdown(`cd${i}`, sessionId, { server }), {}));
        await a.change(oweLook({ sessionId, directory: "/p", server }, NOW, { owe: NOW }));
      }
      await a.change(claim(injection("i1", "cd1", { sessionId: "ses_1", server: "pod-a" }), {}));
      for (const [i, { server }] of scopes.entries()) {
        const scope = { directory: "/p", server };
        assert.deepEqual(
          (await b.read(q.armedIn(scope))).map((c) => [c.id, c.server]),
          i === 1 ? [] : [[`cd${i}`, server]],
        );
        assert.deepEqual(
          (await b.read(q.pendingIn(scope))).map((r) => r.id),
          i === 1 ? ["i1"] : [],
        );
        assert.deepEqual(
          (await b.read(q.sessionsToRecheck(scope, NOW))).map((r) => r.sessionId),
          [`ses_${i}`],
        );
        assert.equal((await b.read(q.session(`ses_${i}`)))?.server, server);
      }
      // An absent server is the machine's own (NULL), not "any".
      assert.deepEqual(
        (await b.read(q.armedIn({ directory: "/p" }))).map((c) => c.id),
        ["cd0"],
      );
      assert.equal(await count("audit_events WHERE server = 'pod-a' AND event IN ('armed', 'fired')"), 2);
      assert.equal(await a.change(releaseLeases(ME, { directory: "/p", server: "pod-b" })), 1);
      assert.equal((await b.read(q.countdown("cd2")))?.owner, null);
      assert.equal((await b.read(q.countdown("cd0")))?.owner, ME);
    },
  },
  {
    name: "scopes at once: the rows of the scopes asked for, in one statement each, every row given to its own scope",
    async run({ a, b }) {
      // A machine's own, two pods sharing its directory path, and another directory (quoted, not ASCII) on the first.
      const scopes = [
        { directory: "/p", server: null },
        { directory: "/p", server: "pod-a" },
        { directory: "/p", server: "pod-b" },
        { directory: '/q "ü"', server: "pod-a" },
      ];
      for (const [i, scope] of scopes.entries()) {
        // Armed: the later the scope, the earlier its deadline.
        await a.change(arm(countdown(`cd${i}`, `ses_${i}_armed`, { ...scope, deadlineAt: NOW + 2000 - i * 10 }), {}));
        await a.change(arm(countdown(`cd${i}_fired`, `ses_${i}_fired`, scope), {}));
        await a.change(
          claim(injection(`i${i}`, `cd${i}_fired`, { ...scope, sessionId: `ses_${i}_fired`, createdAt: NOW + i }), {}),
        );
        await a.change(oweLook({ ...scope, sessionId: `ses_${i}_owed` }, NOW, { owe: NOW - i }));
        await a.change(oweLook({ ...scope, sessionId: `ses_${i}_later` }, NOW, { owe: NOW + 5000 }));
        const parked = { ...scope, sessionId: `ses_${i}_parked` };
        await a.change(park(parked, parkRequest(`park_${i}`, { wakeAt: NOW - i }), NOW - 60_000));
        await a.change(park({ ...scope, sessionId: `ses_${i}_waits` }, parkRequest(`park_${i}_waits`), NOW));
      }
      // pod-b's rows are not asked for.
      const asked = [scopes[0]!, scopes[1]!, scopes[3]!];
      assert.deepEqual(
        (await b.read(q.armedInScopes(asked))).map((c) => c.id),
        ["cd3", "cd1", "cd0"],
      );
      assert.deepEqual(
        (await b.read(q.pendingInScopes(asked))).map((r) => r.id),
        ["i0", "i1", "i3"],
      );
      assert.deepEqual(
        (await b.read(q.sessionsToRecheckInScopes(asked, NOW)))
          .map(({ sessionId, directory, server, recheckAt }) => ({ sessionId, directory, server, recheckAt }))
          .sort((x, y) => x.sessionId.localeCompare(y.sessionId)),
        [0, 1, 3].map((i) => ({ sessionId: `ses_${i}_owed`, ...scopes[i], recheckAt: NOW - i })),
      );
      // Grouped by scope, in the order asked; each scope's rows as its own read gives them.
      const rows = await b.read(leaseRowsIn(asked, NOW));
      assert.equal(rows.length, 3);
      for (const [n, scope] of asked.entries()) {
        assert.deepEqual(rows[n]!.armed, await b.read(q.armedIn(scope)));
        assert.deepEqual(rows[n]!.pending, await b.read(q.pendingIn(scope)));
        assert.deepEqual(rows[n]!.owed, await b.read(q.sessionsToRecheck(scope, NOW)));
        assert.deepEqual(rows[n]!.parks, await b.read(q.parksDueIn(scope, NOW)));
        assert.deepEqual(
          rows[n]!.parks.map((p) => p.id),
          [`park_${scopes.indexOf(scope)}`],
        );
        assert.deepEqual(rows[n]!.armed.map((c) => c.id).concat(rows[n]!.pending.map((r) => r.id)), [
          `cd${scopes.indexOf(scope)}`,
          `i${scopes.indexOf(scope)}`,
        ]);
      }
      assert.deepEqual(await b.read(leaseRowsIn([], NOW)), []);
      // A scope asked for with no rows gets empty lists.
      assert.deepEqual(await b.read(leaseRowsIn([{ directory: "/nowhere" }], NOW)), [
        { armed: [], pending: [], owed: [], parks: [] },
      ]);
    },
  },
  {
    name: "parks due: by their wake time or their next check, earliest first, a scope's or several at once",
    async run({ a, b }) {
      const own = { directory: "/p", server: null };
      const podA = { directory: "/p", server: "pod-a" };
      const elsewhere = { directory: '/q "ü"', server: "pod-a" };
      const parkIn = (scope: Scope, n: number, wakeIn: number, everyMs?: number) =>
        a.change(
          park(
            { ...scope, sessionId: `ses_${n}` },
            parkRequest(`park_${n}`, {
              wakeAt: NOW + wakeIn,
              check: everyMs ? { command: "true", everyMs } : undefined,
            }),
            NOW,
          ),
        );
      await parkIn(own, 1, 5000);
      await parkIn(own, 2, 90_000, 1000); // its check comes first: its first run at once
      await parkIn(own, 3, 3000);
      await parkIn(own, 4, 3_600_000);
      await parkIn(own, 5, 500);
      await a.change(wake({ ...own, sessionId: "ses_5" }, "time", NOW + 500)); // woken: no longer held
      await parkIn(podA, 6, 2000);
      await parkIn(elsewhere, 7, 4000);
      const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id);
      assert.deepEqual(ids(await b.read(q.parksDueIn(own, NOW - 1))), []);
      assert.deepEqual(ids(await b.read(q.parksDueIn(own, NOW + 999))), ["park_2"]);
      assert.deepEqual(ids(await b.read(q.parksDueIn(own, NOW + 6000))), ["park_2", "park_3", "park_1"]);
      assert.deepEqual(ids(await b.read(q.parkedIn(own))), ["park_3", "park_1", "park_2", "park_4"]);
      assert.equal(await b.read(q.countParked()), 6, "every scope's, a woken one not");
      assert.deepEqual(ids(await b.read(q.parkedIn({ directory: "/p" }))), ids(await b.read(q.parkedIn(own))));
      const asked = [own, elsewhere];
      const due = await b.read(q.parksDueInScopes(asked, NOW + 6000));
      assert.deepEqual(ids(due), ["park_2", "park_3", "park_7", "park_1"]);
      assert.deepEqual(
        due.filter((r) => r.server === null),
        await b.read(q.parksDueIn(own, NOW + 6000)),
      );
      assert.deepEqual(await b.read(q.parksDueInScopes([], NOW + 6000)), []);
    },
  },
  {
    name: "parks: a park ends only as its ending allows, once; one no longer held is neither ended nor parked again",
    async run({ a, count }) {
      await a.change(park(S1, parkRequest("park_1"), NOW));
      const held = (await a.read(q.parkOf("ses_1")))!;
      const end = (ending: ParkEnding) =>
        change("test", "ses_1", () => q.endPark("ses_1", "woke", "time", NOW + 1, ending));
      // Not yet due, no check, parked for another reason: nothing ended.
      assert.equal(await a.change(end({ dueBy: held.wakeAt - 1 })), undefined);
      assert.equal(await a.change(end({ withCheck: true })), undefined);
      assert.equal(await a.change(end({ reason: held.reason === "agent" ? "limit" : "agent" })), undefined);
      assert.equal((await a.read(q.parkOf("ses_1")))?.id, "park_1", "still held");
      const ended = await a.change(end({ dueBy: held.wakeAt, reason: held.reason }));
      assert.deepEqual(ended, { ...held, state: "woke", endedAt: NOW + 1, endReason: "time", leaseUntil: null });
      assert.equal(await a.change(end({})), undefined, "of two writers, one ends it");
      const parked = auditRow(NOW + 2, S1, { event: "parked", reason: "limit" });
      const again = change("test", "ses_1", () => q.reparkPark("park_1", { ...held, wakeAt: NOW + 9 }, parked));
      assert.equal(await a.change(again), false);
      assert.equal(await count("audit_events"), 1, "the park's: an end's audit row is its change script's");
    },
  },
];
