// RetentionSchedule promises: with `retentionDays` 0 nothing is ever scheduled; otherwise history older than that many
// days (as of the time of the run) is deleted a minute after start (not during OpenCode's own start-up), then every
// six hours; a run while the engine is not deciding (the store paused) deletes nothing, and the schedule goes on; a run
// that deleted something says so in one log line with what it deleted, one that deleted nothing is silent; a prune
// that fails is reported (the `failure` event of a background job) and the schedule goes on; once stopped (by the
// engine's root), no further run is scheduled, a prune in flight is waited for, and a start is refused. Built here over the engine's context and a real SQLite file, on fake timers.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RetentionSchedule } from "../../src/engine/retention-schedule.js";
import {
  connection,
  folder,
  makeContext,
  quiet,
  store,
  type TestContext,
  useTestFiles,
} from "../support/engine-context.js";
import { DIRECTORY, testConfig } from "../support/engine-fixture.js";
import { advance, START } from "../support/fake-time.js";
import { failChangeOnce, gateChanges } from "../support/store-spies.js";

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
const SIX_HOURS_MS = 6 * 3_600_000;

let ctx: TestContext;

function build(retentionDays: number): RetentionSchedule {
  const config = testConfig(join(folder, "state.db"), { retentionDays });
  ctx = makeContext({ store, config });
  return new RetentionSchedule(ctx);
}

/** An audit row at `at` (epoch ms), written as the audit log writes them. */
function auditAt(at: number, event = "skipped"): void {
  connection.raw.run(
    "INSERT INTO audit_events (at, session_id, directory, event, reason, detail) VALUES (?, ?, ?, ?, ?, ?)",
    at,
    "ses_old",
    DIRECTORY,
    event,
    "no_todos",
    "{}",
  );
}

const auditTimes = () =>
  connection.raw.all<{ at: number }>("SELECT at FROM audit_events ORDER BY id").map((row) => row.at);

const retentionLines = () => ctx.host.logs.filter((line) => line.message.startsWith("retention:"));

/** Lets `ms` pass on the fake clock, then waits for the run it started (its store calls) to finish. */
async function pass(ms: number): Promise<void> {
  await advance(ms);
  await quiet(ctx);
}

useTestFiles();

afterEach(() => {
  ctx?.timers.stop();
});

describe("when it runs", () => {
  it("with retentionDays 0, nothing is scheduled and nothing ever deleted", async () => {
    const schedule = build(0);
    auditAt(START.getTime() - 400 * DAY_MS);
    schedule.start();
    expect(ctx.timers.size).toBe(0);
    await pass(2 * SIX_HOURS_MS);
    expect(auditTimes()).toHaveLength(1);
  });

  it("the first run is a minute after start, not before", async () => {
    const schedule = build(30);
    auditAt(START.getTime() - 31 * DAY_MS);
    schedule.start();
    expect(ctx.timers.has("retention")).toBe(true);
    await pass(MINUTE_MS - 1);
    expect(auditTimes()).toHaveLength(1);
    await pass(1);
    expect(auditTimes()).toEqual([]);
  });

  it("then every six hours, each run with the cutoff of its own time", async () => {
    const schedule = build(1);
    schedule.start();
    await pass(MINUTE_MS);
    // Written after the first run: a row a day old as of the next run, and one that is not, by a millisecond.
    const nextRunAt = Date.now() + SIX_HOURS_MS;
    auditAt(nextRunAt - DAY_MS - 1);
    auditAt(nextRunAt - DAY_MS);
    await pass(SIX_HOURS_MS - 1);
    expect(auditTimes()).toHaveLength(2);
    await pass(1);
    expect(auditTimes()).toEqual([nextRunAt - DAY_MS]);
    // And the one after it.
    auditAt(Date.now() + SIX_HOURS_MS - DAY_MS - 1);
    await pass(SIX_HOURS_MS);
    expect(auditTimes()).toEqual([]);
    expect(ctx.timers.has("retention")).toBe(true);
  });

  it("keeps what is younger than retentionDays as of the run", async () => {
    const schedule = build(7);
    const runAt = START.getTime() + MINUTE_MS;
    auditAt(runAt - 7 * DAY_MS - 1);
    auditAt(runAt - 7 * DAY_MS);
    auditAt(runAt - DAY_MS);
    schedule.start();
    await pass(MINUTE_MS);
    expect(auditTimes()).toEqual([runAt - 7 * DAY_MS, runAt - DAY_MS]);
  });
});

describe("what a run says", () => {
  it("one info line when it deleted something, with what it deleted", async () => {
    const schedule = build(30);
    for (let i = 0; i < 3; i++) auditAt(START.getTime() - 40 * DAY_MS + i);
    schedule.start();
    await pass(MINUTE_MS);
    expect(retentionLines()).toEqual([
      {
        level: "info",
        message: "retention: deleted history older than 30 days",
        extra: expect.objectContaining({ auditEvents: 3, countdowns: 0, injections: 0, sessions: 0 }),
      },
    ]);
  });

  it("nothing when there was nothing to delete", async () => {
    const schedule = build(30);
    auditAt(START.getTime() - DAY_MS);
    schedule.start();
    await pass(MINUTE_MS);
    expect(ctx.timers.has("retention")).toBe(true);
    expect(retentionLines()).toEqual([]);
    expect(ctx.failures).toEqual([]);
  });
});

describe("while the engine is not deciding", () => {
  it("a run while the store is paused deletes nothing, and the next one, once it works, does", async () => {
    const schedule = build(30);
    auditAt(START.getTime() - 31 * DAY_MS);
    schedule.start();
    ctx.lifecycle.enter("paused_store");
    await pass(MINUTE_MS);
    expect(auditTimes()).toHaveLength(1);
    expect(retentionLines()).toEqual([]);
    expect(ctx.timers.has("retention")).toBe(true);
    ctx.lifecycle.enter("running");
    await pass(SIX_HOURS_MS);
    expect(auditTimes()).toEqual([]);
  });

  it("while the engine is ending, a run deletes nothing", async () => {
    const schedule = build(30);
    auditAt(START.getTime() - 31 * DAY_MS);
    await schedule.start();
    ctx.lifecycle.enter("disposing");
    await pass(MINUTE_MS);
    expect(auditTimes()).toHaveLength(1);
  });
});

describe("stop()", () => {
  it("once stopped, nothing more is scheduled, and a start is refused", async () => {
    const schedule = build(30);
    auditAt(START.getTime() - 31 * DAY_MS);
    await schedule.start();
    await schedule.stop();
    expect(ctx.timers.has("retention")).toBe(false);
    await pass(MINUTE_MS);
    expect(auditTimes()).toHaveLength(1);
    await expect(schedule.start()).rejects.toThrow("the retention schedule was stopped: it cannot start again");
    expect(ctx.timers.has("retention")).toBe(false);
  });

  it("waits for the prune in flight, and schedules none after it", async () => {
    const schedule = build(30);
    auditAt(START.getTime() - 31 * DAY_MS);
    const slow = gateChanges(store, "prune", "before");
    await schedule.start();
    await advance(MINUTE_MS);
    let stopped = false;
    const stopping = schedule.stop().then(() => (stopped = true));
    await advance(0);
    expect(stopped).toBe(false);
    slow.open();
    await stopping;
    slow.restore();
    expect(auditTimes()).toEqual([]);
    expect(ctx.timers.has("retention")).toBe(false);
    expect(ctx.failures).toEqual([]);
  });
});

describe("a prune that fails", () => {
  it("is reported as a background job's failure, and the schedule goes on", async () => {
    const schedule = build(30);
    auditAt(START.getTime() - 31 * DAY_MS);
    const broken = new Error("database is locked");
    const restore = failChangeOnce(store, "prune", broken);
    schedule.start();
    await pass(MINUTE_MS);
    restore();
    expect(ctx.failures).toEqual([{ operation: "background job", error: broken }]);
    expect(auditTimes()).toHaveLength(1);
    expect(ctx.timers.has("retention")).toBe(true);
    await pass(SIX_HOURS_MS);
    expect(auditTimes()).toEqual([]);
    expect(retentionLines()).toHaveLength(1);
  });
});
