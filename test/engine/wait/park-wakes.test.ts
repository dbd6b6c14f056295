// ParkWakes promises: the parks of the engine's scope whose wake time has come are woken (`woke: time`), each once
// however many engines try; a park not due yet, one due only for its check, and one of another scope are left alone;
// each wake hands back the look it owed the session, for the same tick to take. Over the engine's context and a real
// SQLite file; the whole engine waking a park at its tick is test/engine/scenarios/parked.test.ts.
import { describe, expect, it } from "vitest";
import { ParkWakes } from "../../../src/engine/wait/park-wakes.js";
import { park } from "../../../src/store/changes/park.js";
import { parksDueIn } from "../../../src/store/reads.js";
import { makeContext, rows, store, useTestFiles } from "../../support/engine-context.js";
import { DIRECTORY, testConfig } from "../../support/engine-fixture.js";

useTestFiles();

const at = (sessionId: string, directory = DIRECTORY) => ({ sessionId, directory, server: null });

async function parked(sessionId: string, wakeInMs: number, extra: { directory?: string; checkEveryMs?: number } = {}) {
  const now = Date.now();
  await store.change(
    park(
      at(sessionId, extra.directory),
      {
        id: `park_${sessionId}`,
        reason: "agent",
        wakeAt: now + wakeInMs,
        ...(extra.checkEveryMs ? { check: { command: "true", everyMs: extra.checkEveryMs } } : {}),
        detail: {},
      },
      now - 1,
    ),
  );
}

const wakes = () => new ParkWakes(makeContext({ store, config: testConfig(":memory:") }));
const trail = (sessionId: string) => rows.audit(sessionId).map((r) => (r.reason ? `${r.event}:${r.reason}` : r.event));

describe("ParkWakes", () => {
  it("wakes the parks whose time has come and hands back the looks they owe", async () => {
    await parked("ses_due", -1000);
    await parked("ses_later", 60_000);
    await parked("ses_elsewhere", -1000, { directory: "/other/project" });
    const owed = await wakes().wakeDue();
    expect(owed).toEqual([{ sessionId: "ses_due", recheckAt: expect.any(Number), owedSince: null }]);
    expect(trail("ses_due")).toEqual(["parked:agent", "woke:time"]);
    expect(trail("ses_later")).toEqual(["parked:agent"]);
    expect(trail("ses_elsewhere")).toEqual(["parked:agent"]);
    expect(rows.session("ses_due")).toMatchObject({ recheck_at: owed[0]!.recheckAt });
  });

  it("leaves a park due only for its check to the check's runner", async () => {
    await parked("ses_check", 60_000, { checkEveryMs: 1 });
    const due = await store.read(parksDueIn({ directory: DIRECTORY }, Date.now() + 10));
    expect(due.map((p) => p.sessionId)).toEqual(["ses_check"]);
    expect(await wakes().wakeDue(due)).toEqual([]);
    expect(trail("ses_check")).toEqual(["parked:agent"]);
  });

  it("wakes a park once, however many engines wake it at the same tick", async () => {
    await parked("ses_due", -1000);
    const results = await Promise.all([wakes().wakeDue(), wakes().wakeDue(), wakes().wakeDue()]);
    expect(results.flat()).toHaveLength(1);
    expect(trail("ses_due")).toEqual(["parked:agent", "woke:time"]);
  });

  it("acts on the rows its caller read, without reading them again", async () => {
    await parked("ses_due", -1000);
    const handed = await store.read(parksDueIn({ directory: DIRECTORY }, Date.now()));
    await store.change(
      park(at("ses_unread"), { id: "park_unread", reason: "limit", wakeAt: Date.now() - 1, detail: {} }, Date.now()),
    );
    expect((await wakes().wakeDue(handed)).map((o) => o.sessionId)).toEqual(["ses_due"]);
    expect(trail("ses_unread")).toEqual(["parked:limit"]);
  });
});
