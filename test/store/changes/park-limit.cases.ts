// What park-limit.ts promises on every database: a limit that names its reset parks the session until then (its error
// recorded as a limit, in the same transaction); a run of limits with no time backs off 2, 4, 8 minutes from one park
// to the next, the run's start kept, and stops as a permanent error once `maxParkHours` have passed since it began;
// a turn that ended well between two limits starts the run over; a stopped session is not parked.
import assert from "node:assert/strict";
import type { LimitReading } from "../../../src/core/limits/read-limit.js";
import { parkForLimit, WAITED_TOO_LONG, type LimitMet } from "../../../src/store/changes/park-limit.js";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { stop } from "../../../src/store/changes/stop.js";
import { wake } from "../../../src/store/changes/wake.js";
import { q } from "../../../src/store/script.js";
import { NOW, S1, type ContractCase } from "../contract-world.js";

const MINUTE = 60_000;
const OPTIONS = { maxParkHours: 1, wakeJitterSeconds: 0 };
const ERROR = { name: "APIError", statusCode: 429, message: "Rate limit reached" };

const met = (id: string, reading: LimitReading): LimitMet => ({ id, error: ERROR, reading, options: OPTIONS });
const unsaid = (id: string) => met(id, { kind: "lifts_unsaid" });

export const PARK_LIMIT_CASES: ContractCase[] = [
  {
    name: "park-limit: parked until the reset it names, the error recorded as a limit with it",
    async run({ a, b, trail }) {
      const reading: LimitReading = { kind: "lifts_at", at: NOW + 40_000, source: { field: "retry-after" } };
      assert.deepEqual(await a.change(parkForLimit(S1, met("park_1", reading), NOW)), {
        parked: true,
        id: "park_1",
        until: NOW + 40_000,
      });
      const park = await b.read(q.parkOf("ses_1"));
      assert.deepEqual([park?.reason, park?.wakeAt, park?.since, park?.backoffMs], ["limit", NOW + 40_000, NOW, null]);
      assert.deepEqual(JSON.parse(park!.detail!), {
        ...{ resetAt: NOW + 40_000, resetFrom: { field: "retry-after" }, staggerMs: 0 },
        ...{ errorName: "APIError", statusCode: 429, message: "Rate limit reached" },
      });
      const session = await b.read(q.session("ses_1"));
      assert.deepEqual([session?.lastErrorKind, session?.lastErrorAt, session?.errorStreak], ["limit", NOW, 0]);
      assert.deepEqual(await trail("ses_1"), ["parked:limit"]);
    },
  },
  {
    name: "park-limit: a run of limits with no time backs off from park to park, then stops once it waited too long",
    async run({ a, b, trail }) {
      const woken = async (at: number) => assert.equal((await b.change(wake(S1, "time", at))).woke, true);
      assert.equal((await a.change(parkForLimit(S1, unsaid("park_1"), NOW))).parked, true);
      assert.equal((await b.read(q.parkOf("ses_1")))?.wakeAt, NOW + 2 * MINUTE);
      await woken(NOW + 2 * MINUTE);
      // The continuation after the wake fails on the limit again: the same run, its next step.
      const second = NOW + 3 * MINUTE;
      assert.equal((await a.change(parkForLimit(S1, unsaid("park_2"), second))).parked, true);
      const park2 = await b.read(q.parkOf("ses_1"));
      assert.deepEqual(
        [park2?.id, park2?.wakeAt, park2?.since, park2?.backoffMs],
        ["park_2", second + 4 * MINUTE, NOW, 4 * MINUTE],
      );
      assert.equal(JSON.parse(park2!.detail!).unsaidParks, 1);
      assert.equal((await b.read(q.lastParkOf("ses_1")))?.id, "park_2");
      await woken(second + 4 * MINUTE);
      // An hour after the run began: no more waiting, a provider error the person is told of.
      assert.deepEqual(await a.change(parkForLimit(S1, unsaid("park_3"), NOW + 61 * MINUTE)), {
        parked: false,
        because: "waited_too_long",
      });
      assert.equal(await b.read(q.parkOf("ses_1")), undefined);
      const session = await b.read(q.session("ses_1"));
      assert.deepEqual([session?.lastErrorKind, session?.lastErrorName], ["permanent", WAITED_TOO_LONG]);
      assert.deepEqual(await trail("ses_1"), ["parked:limit", "woke:time", "parked:limit", "woke:time"]);
    },
  },
  {
    name: "park-limit: a turn that ended well between two limits starts the run over; a stopped session is not parked",
    async run({ a, b }) {
      await a.change(parkForLimit(S1, unsaid("park_1"), NOW));
      await b.change(wake(S1, "time", NOW + 2 * MINUTE));
      // The errors resolved by a good turn (transitions.ts's afterErrorsResolved).
      await a.change(changeSession(S1, NOW + 3 * MINUTE, { lastErrorKind: null, lastErrorAt: null }));
      await b.change(parkForLimit(S1, unsaid("park_2"), NOW + 4 * MINUTE));
      const park = await a.read(q.parkOf("ses_1"));
      assert.deepEqual([park?.since, park?.backoffMs], [NOW + 4 * MINUTE, 2 * MINUTE]);
      await a.change(stop(S1, "command", NOW + 5 * MINUTE));
      assert.deepEqual(await b.change(parkForLimit(S1, unsaid("park_3"), NOW + 6 * MINUTE)), {
        parked: false,
        because: "stopped",
      });
      assert.equal(
        (await a.read(q.session("ses_1")))?.lastErrorAt,
        NOW + 6 * MINUTE,
        "the error is recorded all the same",
      );
    },
  },
];
