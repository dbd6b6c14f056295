// ParkChecks promises: a parked park whose check is due gets one run, however many engines start it at the same tick
// (the run is claimed in the database first); a run that fails keeps its output on the park and the park holds; a run
// that passes wakes it (`woke: check`), the session owed a look and left a note with the check's output; a park not
// due, or whose time has come (the wake's), is not run. Over the engine's context and a real SQLite file, the checks
// run by a counting stand-in, and once by a real shell.
import { describe, expect, it } from "vitest";
import { ParkChecks } from "../../../src/engine/wait/park-checks.js";
import type { CheckResult } from "../../../src/engine/wait/run-check.js";
import { park } from "../../../src/store/changes/park.js";
import { parksDueIn } from "../../../src/store/reads.js";
import { makeContext, rows, store, useTestFiles } from "../../support/engine-context.js";
import { DIRECTORY, testConfig } from "../../support/engine-fixture.js";

useTestFiles();

const S = "ses_check";
const scope = { sessionId: S, directory: DIRECTORY, server: null };
const trail = () => rows.audit(S).map((r) => (r.reason ? `${r.event}:${r.reason}` : r.event));

async function parkedWithCheck(command: string, wakeInMs = 3_600_000): Promise<void> {
  const now = Date.now();
  const request = {
    id: "park_check1",
    reason: "agent" as const,
    wakeAt: now + wakeInMs,
    check: { command, everyMs: 15_000 },
    detail: { asked: "CI is running" },
  };
  await store.change(park(scope, request, now - 1));
}

function checks(results: CheckResult[]) {
  const ran: string[] = [];
  const ctx = makeContext({ store, config: testConfig(":memory:") });
  const runner = new ParkChecks(ctx, async (command) => {
    ran.push(command);
    return results.shift() ?? { exitCode: 1, output: "", timedOut: false };
  });
  const startDue = async () => {
    runner.startDue(await store.read(parksDueIn({ directory: DIRECTORY }, Date.now())));
    await Promise.all(ctx.tracked);
  };
  return { ran, startDue, runner, ctx };
}

describe("ParkChecks", () => {
  it("runs a due check once however many engines start it; a failed run keeps its output and the park holds", async () => {
    await parkedWithCheck("gh run view --exit-status");
    const engines = [checks([{ exitCode: 1, output: "in progress\n", timedOut: false }]), checks([]), checks([])];
    await Promise.all(engines.map((e) => e.startDue()));
    expect(engines.flatMap((e) => e.ran)).toEqual(["gh run view --exit-status"]);
    const [held] = rows.parks(S);
    expect(held).toMatchObject({ state: "parked", check_runs: 1, check_output: "in progress\n" });
    // Its next run is a poll interval on: not due now.
    await engines[0]!.startDue();
    expect(engines[0]!.ran).toHaveLength(1);
    expect(trail()).toEqual(["parked:agent"]);
  });

  it("wakes the park when its check passes, owing the session a look and a note of what the check printed", async () => {
    await parkedWithCheck("gh run view --exit-status");
    const { startDue } = checks([{ exitCode: 0, output: "✓ build passed\n", timedOut: false }]);
    await startDue();
    expect(trail()).toEqual(["parked:agent", "woke:check"]);
    expect(rows.audit(S).at(-1)!.detail).toMatchObject({ parkId: "park_check1", run: 1, output: "✓ build passed\n" });
    const session = rows.session(S)!;
    expect(session.recheck_at).not.toBeNull();
    expect(JSON.parse(session.wake_note as string)).toEqual({
      kind: "check_passed",
      reason: "CI is running",
      command: "gh run view --exit-status",
      output: "✓ build passed\n",
    });
  });

  it("leaves a park whose time has come to its wake", async () => {
    await parkedWithCheck("true", -1000);
    const { ran, startDue } = checks([]);
    await startDue();
    expect(ran).toEqual([]);
  });

  it("runs the check with a real shell in the project folder", async () => {
    const ctx = makeContext({ store, config: testConfig(":memory:"), directory: process.cwd() });
    const project = { sessionId: S, directory: process.cwd(), server: null };
    const now = Date.now();
    const request = {
      id: "park_real01",
      reason: "agent" as const,
      wakeAt: now + 60_000,
      check: { command: "test -f package.json && echo found", everyMs: 15_000 },
      detail: { asked: "a file" },
    };
    await store.change(park({ ...project, sessionId: "ses_real" }, request, now - 1));
    new ParkChecks(ctx).startDue(await store.read(parksDueIn({ directory: process.cwd() }, Date.now())));
    await Promise.all(ctx.tracked);
    expect(rows.audit("ses_real").map((r) => `${r.event}:${r.reason}`)).toEqual(["parked:agent", "woke:check"]);
    expect(rows.audit("ses_real").at(-1)!.detail).toMatchObject({ output: "found\n" });
  });
});
