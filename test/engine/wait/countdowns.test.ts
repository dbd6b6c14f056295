// Countdowns is the one owner of a countdown: its row, its place in memory and its timer change together. It promises
// one armed countdown per session (a new one supersedes), that a countdown ended (cancelled, skipped, claimed, let go)
// never comes due, that rows no live process holds are adopted and re-timed or expired by the misfire policy, that a
// countdown taken over by another owner is never fired here, and that a claim (fired + pending injection) succeeds
// once. Built here over a hand-made context and a real SQLite file, with fake timers.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/resolve.js";
import { Countdowns, type DueInfo } from "../../../src/engine/wait/countdowns.js";
import type { Armed } from "../../../src/engine/wait/held-countdowns.js";
import type { NewCountdown, NewInjection } from "../../../src/store/port.js";
import { arm } from "../../../src/store/changes/arm.js";
import { cancelByKey } from "../../../src/store/changes/cancel-by-key.js";
import { SqliteStore } from "../../../src/store/sqlite/sqlite-store.js";
import {
  connection,
  deadOwner,
  folder,
  liveOwner,
  makeContext,
  remoteOwner,
  rows,
  store,
  type TestContext,
  useTestFiles,
} from "../../support/engine-context.js";
import { DIRECTORY, testConfig } from "../../support/engine-fixture.js";
import { advance } from "../../support/fake-time.js";
import { failChangeOnce, gateChanges } from "../../support/store-spies.js";
import { TAKE } from "../../../src/store/changes/look-owed.js";

const S = "ses_countdowns";
const LEASE_MS = 15_000;
const WINDOW_S = 60;

let config: Config;
const contexts: TestContext[] = [];

interface Probe {
  countdowns: Countdowns;
  ctx: TestContext;
  due: Array<{ armed: Armed; info: DueInfo }>;
  waiting: Armed[];
}

/** A Countdowns of its own process (owner), over the shared file. */
function engine(owner = liveOwner(), over: SqliteStore = store): Probe {
  const ctx = makeContext({ store: over, config, owner });
  contexts.push(ctx);
  const due: Probe["due"] = [];
  const waiting: Armed[] = [];
  const countdowns = new Countdowns(ctx);
  countdowns.connect({
    armed: (armed) => void waiting.push(armed),
    due: (armed, info) => void due.push({ armed, info }),
  });
  return { countdowns, ctx, due, waiting };
}

const request = (delayMs: number, extra: Partial<Parameters<Countdowns["arm"]>[0]> = {}) => ({
  sessionId: S,
  summary: { open: 2, total: 3, completed: 1 },
  attempt: 0,
  delayMs,
  detail: { trigger: "idle" },
  ...extra,
});

/** A countdown another process left in the file. */
async function plant(extra: Partial<NewCountdown> & { owner: string }) {
  const now = Date.now();
  const countdown: NewCountdown = {
    id: `cd_planted_${Math.random().toString(36).slice(2, 10)}`,
    sessionId: S,
    directory: DIRECTORY,
    armedAt: now - 1000,
    deadlineAt: now + 4000,
    leaseUntil: now + LEASE_MS,
    attempt: 1,
    todosOpen: 2,
    todosTotal: 5,
    ...extra,
  };
  await store.change(arm(countdown, {}));
  return countdown;
}

function injectionFor(armed: Armed, owner: string, id = `inj_${armed.row.id}`): NewInjection {
  return {
    id,
    sessionId: armed.row.sessionId,
    directory: DIRECTORY,
    countdownId: armed.row.id,
    messageId: `msg_${id}`,
    createdAt: Date.now(),
    agent: "build",
    model: "scripted/model-1",
    variant: null,
    todosTotal: 3,
    todosOpen: 2,
    attempt: armed.row.attempt,
    owner,
    leaseUntil: Date.now() + 60_000,
  };
}

const armedRows = (sessionId = S) => rows.countdowns(sessionId).filter((c) => c.state === "armed");

useTestFiles();
beforeEach(() => {
  config = testConfig(join(folder, "state.db"), { leaseMs: LEASE_MS, resumeWindowSeconds: WINDOW_S });
});

afterEach(() => {
  for (const ctx of contexts.splice(0)) ctx.timers.stop();
});

describe("arm", () => {
  it("writes one armed row with this owner's lease and the `armed` audit, and comes due exactly at the deadline", async () => {
    const { countdowns, ctx, due, waiting } = engine();
    const now = Date.now();
    const armed = await countdowns.arm(request(2000, { attempt: 1 }));
    expect(armed).toBeDefined();
    expect(rows.countdowns(S)).toMatchObject([
      {
        id: armed!.row.id,
        state: "armed",
        owner: ctx.owner,
        armed_at: now,
        deadline_at: now + 2000,
        lease_until: now + LEASE_MS,
        attempt: 1,
        todos_open: 2,
        todos_total: 3,
      },
    ]);
    expect(rows.audit(S)).toMatchObject([
      { event: "armed", detail: { deadlineAt: now + 2000, todosOpen: 2, todosTotal: 3, attempt: 1, trigger: "idle" } },
    ]);
    expect(waiting).toEqual([armed]);
    expect(countdowns.get(S)).toBe(armed);
    expect(countdowns.remainingMs(armed!)).toBe(2000);

    await advance(1999);
    expect(due).toEqual([]);
    await advance(1);
    expect(due).toEqual([{ armed, info: { lateMs: 0, resumed: null } }]);
    // Coming due is not firing: the row stays armed until the injector claims it.
    expect(rows.countdowns(S)).toMatchObject([{ state: "armed" }]);
  });

  it("writes the session patch and the look owed with the arming", async () => {
    const { countdowns } = engine();
    await countdowns.arm(request(2000, { sessionPatch: { agent: "build" }, look: TAKE }));
    expect(rows.session(S)).toMatchObject({ agent: "build", recheck_at: null, directory: DIRECTORY });
  });

  it("arming again supersedes: the older ends `superseded` at once, never comes due, one armed row remains", async () => {
    const { countdowns, ctx, due } = engine();
    const first = (await countdowns.arm(request(2000)))!;
    await advance(500);
    const second = (await countdowns.arm(request(2000, { attempt: 1 })))!;
    expect(rows.countdowns(S)).toMatchObject([
      { id: first.row.id, state: "cancelled", end_reason: "superseded" },
      { id: second.row.id, state: "armed" },
    ]);
    expect(rows.audit(S).find((r) => r.reason === "superseded")).toMatchObject({
      event: "cancelled",
      detail: { replacedBy: second.row.id },
    });
    expect(countdowns.isCurrent(first)).toBe(false);
    expect(countdowns.size).toBe(1);
    expect(ctx.timers.has(`countdown:${first.row.id}`)).toBe(false);
    await advance(1500); // the first one's deadline
    expect(due).toEqual([]);
    await advance(500);
    expect(due.map((d) => d.armed)).toEqual([second]);
  });

  // Two processes that saw the same idle: the one whose countdown is held by a live owner within its lease wins; a
  // countdown whose owner is gone or whose lease ran out is no reason to hold back.
  it.each([
    { holder: "a live engine of this host", owner: liveOwner, leaseLeftMs: 5000, respected: true },
    { holder: "an engine on another host", owner: () => remoteOwner(), leaseLeftMs: 5000, respected: true },
    { holder: "a live engine whose lease ran out", owner: liveOwner, leaseLeftMs: -1, respected: false },
    { holder: "a dead engine within its lease", owner: deadOwner, leaseLeftMs: 5000, respected: false },
  ])("a countdown held by $holder is respected: $respected", async ({ owner, leaseLeftMs, respected }) => {
    const held = await plant({ owner: owner(), leaseUntil: Date.now() + leaseLeftMs });
    const { countdowns, due, waiting } = engine();
    const armed = await countdowns.arm(request(2000));
    if (respected) {
      expect(armed).toBeUndefined();
      expect(countdowns.has(S)).toBe(false);
      expect(waiting).toEqual([]);
      expect(armedRows()).toMatchObject([{ id: held.id }]);
      expect(rows.audit(S).at(-1)).toMatchObject({
        event: "skipped",
        reason: "in_flight",
        detail: { heldBy: held.owner },
      });
      await advance(10_000);
      expect(due).toEqual([]);
    } else {
      expect(armed).toBeDefined();
      expect(armedRows()).toMatchObject([{ id: armed!.row.id }]);
      expect(rows.countdowns(S).find((c) => c.id === held.id)).toMatchObject({
        state: "cancelled",
        end_reason: "superseded",
      });
    }
  });

  it("a store that fails leaves nothing being armed behind", async () => {
    const { countdowns } = engine();
    failChangeOnce(store, "arm", new Error("disk I/O error"));
    await expect(countdowns.arm(request(2000))).rejects.toThrow("disk I/O error");
    expect(countdowns.has(S)).toBe(false);
    expect(rows.countdowns(S)).toEqual([]);
  });
});

describe("cancel", () => {
  it("leaves memory and the timer at once, ends the row with its reason and detail, and never comes due", async () => {
    const { countdowns, ctx, due } = engine();
    const armed = (await countdowns.arm(request(2000)))!;
    await advance(700);
    const ended = countdowns.cancel(S, "busy", { source: "event" }, { lastUserMessageAt: 42 });
    // Before the write: the next streamed part of the session must find nothing to do.
    expect(countdowns.has(S)).toBe(false);
    expect(ctx.timers.has(`countdown:${armed.row.id}`)).toBe(false);
    expect(await ended).toBe(true);
    expect(rows.countdowns(S)).toMatchObject([
      { state: "cancelled", end_reason: "busy", ended_at: Date.now(), lease_until: null },
    ]);
    expect(rows.audit(S).at(-1)).toMatchObject({ event: "cancelled", reason: "busy", detail: { source: "event" } });
    expect(rows.session(S)).toMatchObject({ last_user_message_at: 42 });
    await advance(5000);
    expect(due).toEqual([]);
  });

  it("with nothing counting down, still writes the session change and resolves false", async () => {
    const { countdowns } = engine();
    expect(await countdowns.cancel(S, "user_message", {}, { lastUserMessageAt: 7 })).toBe(false);
    expect(rows.session(S)).toMatchObject({ last_user_message_at: 7 });
    expect(rows.audit(S)).toEqual([]);
  });

  it("a second cancel finds nothing and writes nothing", async () => {
    const { countdowns } = engine();
    await countdowns.arm(request(2000));
    expect(await countdowns.cancel(S, "busy", {})).toBe(true);
    expect(await countdowns.cancel(S, "user_message", {})).toBe(false);
    expect(rows.trail(S)).toEqual(["armed", "cancelled:busy"]);
  });

  it("activity while the arming is being written ends it as soon as it is, with that activity's reason", async () => {
    const { countdowns, due, waiting } = engine();
    const arming = countdowns.arm(request(2000));
    expect(countdowns.has(S)).toBe(true);
    const cancelled = countdowns.cancel(S, "assistant_activity", { messageId: "msg_1" });
    expect(await arming).toBeUndefined();
    expect(await cancelled).toBe(false);
    expect(countdowns.has(S)).toBe(false);
    expect(waiting).toEqual([]);
    expect(rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "assistant_activity" }]);
    expect(rows.audit(S).at(-1)).toMatchObject({ event: "cancelled", detail: { messageId: "msg_1" } });
    await advance(5000);
    expect(due).toEqual([]);
  });

  it("cancels only its own session", async () => {
    const { countdowns, due } = engine();
    await countdowns.arm(request(2000));
    await countdowns.arm(request(2000, { sessionId: "ses_other" }));
    await countdowns.cancel("ses_other", "busy", {});
    await advance(2000);
    expect(due.map((d) => d.armed.row.sessionId)).toEqual([S]);
  });
});

describe("end, stillArmed, letGo", () => {
  it("a guard's skip at the deadline ends the countdown once, audited with the guard's reason", async () => {
    const { countdowns } = engine();
    const armed = (await countdowns.arm(request(2000)))!;
    await advance(2000);
    const skip = { skipped: "todos_complete", detail: { stage: "deadline" } } as const;
    expect(await countdowns.end(armed, skip)).toBe(true);
    expect(countdowns.has(S)).toBe(false);
    expect(await countdowns.end(armed, skip)).toBe(false);
    expect(rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "todos_complete" }]);
    expect(rows.trail(S)).toEqual(["armed", "skipped:todos_complete"]);
  });

  it("a countdown ended elsewhere (the TUI's key) is let go when asked whether it is still armed", async () => {
    const { countdowns, ctx, due } = engine();
    const armed = (await countdowns.arm(request(2000)))!;
    expect(await countdowns.stillArmed(armed)).toBe(true);
    await store.change(cancelByKey({ sessionId: S, directory: DIRECTORY }, Date.now(), { source: "tui" }));
    expect(await countdowns.stillArmed(armed)).toBe(false);
    expect(countdowns.has(S)).toBe(false);
    expect(ctx.timers.has(`countdown:${armed.row.id}`)).toBe(false);
    await advance(5000);
    expect(due).toEqual([]);
  });

  it("letGo drops the countdown only when it is the one held", async () => {
    const { countdowns, due } = engine();
    const armed = (await countdowns.arm(request(2000)))!;
    countdowns.letGo(S, "cd_some_other");
    expect(countdowns.get(S)).toBe(armed);
    countdowns.letGo(S, armed.row.id);
    expect(countdowns.has(S)).toBe(false);
    await advance(5000);
    expect(due).toEqual([]);
  });
});

describe("claim", () => {
  it("fires the countdown and records the injection `pending` in one step; a second claim of it fails", async () => {
    const { countdowns, ctx } = engine();
    const armed = (await countdowns.arm(request(2000)))!;
    await advance(2000);
    const injection = injectionFor(armed, ctx.owner);
    expect(await countdowns.claim(armed, injection, { lateMs: 0 })).toBe(true);
    expect(countdowns.has(S)).toBe(false);
    expect(rows.countdowns(S)).toMatchObject([{ state: "fired", ended_at: Date.now(), lease_until: null }]);
    expect(rows.injections(S)).toMatchObject([{ id: injection.id, status: "pending", countdown_id: armed.row.id }]);
    expect(rows.audit(S).at(-1)).toMatchObject({
      event: "fired",
      detail: { injectionId: injection.id, attempt: 0, lateMs: 0 },
    });
    expect(await countdowns.claim(armed, injectionFor(armed, ctx.owner, "inj_second"), {})).toBe(false);
    expect(rows.injections(S)).toHaveLength(1);
    expect(rows.trail(S).filter((e) => e === "fired")).toHaveLength(1);
  });

  it("fails for a countdown cancelled meanwhile, and records nothing", async () => {
    const { countdowns, ctx } = engine();
    const armed = (await countdowns.arm(request(2000)))!;
    await advance(2000);
    await countdowns.cancel(S, "user_message", {});
    expect(await countdowns.claim(armed, injectionFor(armed, ctx.owner), {})).toBe(false);
    expect(rows.injections(S)).toEqual([]);
  });

  it("fails for a row ended elsewhere while still held here, and lets it go", async () => {
    const { countdowns, ctx } = engine();
    const armed = (await countdowns.arm(request(2000)))!;
    await advance(2000);
    await store.change(cancelByKey({ sessionId: S, directory: DIRECTORY }, Date.now(), { source: "tui" }));
    expect(countdowns.get(S)).toBe(armed);
    expect(await countdowns.claim(armed, injectionFor(armed, ctx.owner), {})).toBe(false);
    expect(countdowns.has(S)).toBe(false);
    expect(rows.injections(S)).toEqual([]);
    expect(rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "user_key" }]);
  });

  it("is one transaction: an injection that cannot be written leaves the countdown armed, for a recovery to adopt", async () => {
    const { countdowns, ctx, due } = engine();
    const other = (await countdowns.arm(request(2000, { sessionId: "ses_other" })))!;
    const armed = (await countdowns.arm(request(2000)))!;
    await advance(2000);
    expect(await countdowns.claim(other, injectionFor(other, ctx.owner, "inj_taken"), {})).toBe(true);
    // The same injection id again: the insert fails after the countdown's update in the same transaction.
    await expect(countdowns.claim(armed, injectionFor(armed, ctx.owner, "inj_taken"), {})).rejects.toThrow();
    expect(rows.countdowns(S)).toMatchObject([{ state: "armed", owner: ctx.owner }]);
    expect(rows.trail(S)).toEqual(["armed"]);
    expect(await countdowns.recover("store_recovered")).toMatchObject({ fired: 1 });
    await advance(0);
    expect(due.map((d) => d.armed.row.id)).toEqual([other.row.id, armed.row.id, armed.row.id]);
  });

  it("a lease tick while the claim is being written does not adopt the countdown back", async () => {
    // A store whose claim takes a while (an asynchronous driver): the row is still armed and ours, yet no longer held.
    const slow = new SqliteStore(connection);
    const { open } = gateChanges(slow, "claim", "before");
    const { countdowns, ctx, due } = engine(liveOwner(), slow);
    const armed = (await countdowns.arm(request(2000)))!;
    await advance(2000);
    expect(due).toHaveLength(1);
    const claim = countdowns.claim(armed, injectionFor(armed, ctx.owner), {});
    expect(await countdowns.recover("lease_expired")).toEqual({ rearmed: 0, fired: 0, expired: 0, foreign: 0 });
    expect(countdowns.has(S)).toBe(false);
    open();
    expect(await claim).toBe(true);
    await advance(10_000);
    expect(due).toHaveLength(1);
    expect(rows.trail(S)).toEqual(["armed", "fired"]);
  });

  // On PostgreSQL a lease tick's read runs on another connection: it can see a row this process wrote before this
  // process has its answer. Adopted then, an own countdown nobody lost got a `resumed: lease_expired` row (thousands
  // in the 4-process PostgreSQL test).
  it("a lease tick between an arming's write and its answer does not adopt the new countdown", async () => {
    const slow = new SqliteStore(connection);
    const { open } = gateChanges(slow, "arm", "after");
    const { countdowns, due } = engine(liveOwner(), slow);
    const arming = countdowns.arm(request(2000));
    await advance(0);
    expect(armedRows()).toHaveLength(1);
    expect(await countdowns.recover("lease_expired")).toEqual({ rearmed: 0, fired: 0, expired: 0, foreign: 0 });
    open();
    expect(await arming).toBeDefined();
    await advance(2000);
    expect(due).toHaveLength(1);
    expect(rows.trail(S)).toEqual(["armed"]);
  });

  it("a lease tick while a cancel waits for the session's lane does not adopt the countdown back", async () => {
    const { countdowns, ctx, due } = engine();
    await countdowns.arm(request(2000));
    let open!: () => void;
    const busyLane = ctx.lanes.post(S, () => new Promise<void>((resolve) => (open = resolve)));
    const ended = countdowns.cancel(S, "busy", { source: "event" });
    expect(await countdowns.recover("lease_expired")).toEqual({ rearmed: 0, fired: 0, expired: 0, foreign: 0 });
    open();
    await busyLane;
    expect(await ended).toBe(true);
    await advance(5000);
    expect(due).toEqual([]);
    expect(rows.trail(S)).toEqual(["armed", "cancelled:busy"]);
  });
});

describe("recover", () => {
  it("adopts a countdown whose owner died, even within its lease, and waits out the time left", async () => {
    const previous = deadOwner();
    const planted = await plant({ owner: previous });
    const { countdowns, ctx, due } = engine();
    const report = await countdowns.recover("restart");
    expect(report).toEqual({ rearmed: 1, fired: 0, expired: 0, foreign: 0 });
    expect(rows.countdowns(S)).toMatchObject([
      { id: planted.id, state: "armed", owner: ctx.owner, lease_until: Date.now() + LEASE_MS },
    ]);
    expect(rows.audit(S).at(-1)).toMatchObject({
      event: "resumed",
      reason: "restart",
      detail: { previousOwner: previous, deadlineAt: planted.deadlineAt, remainingMs: 4000 },
    });
    expect(countdowns.get(S)).toMatchObject({ resumed: "restart", summary: { open: 2, total: 5, completed: 0 } });
    await advance(3999);
    expect(due).toEqual([]);
    await advance(1);
    expect(due).toMatchObject([{ armed: { row: { id: planted.id } }, info: { lateMs: 0, resumed: "restart" } }]);
  });

  it("a live owner's countdown is left to it until its lease runs out, then taken over", async () => {
    const holder = remoteOwner();
    const planted = await plant({ owner: holder, deadlineAt: Date.now() + 30_000 });
    const { countdowns, ctx } = engine();
    expect(await countdowns.recover("lease_expired")).toEqual({ rearmed: 0, fired: 0, expired: 0, foreign: 1 });
    expect(countdowns.has(S)).toBe(false);
    expect(armedRows()).toMatchObject([{ owner: holder }]);
    await advance(LEASE_MS + 1);
    expect(await countdowns.recover("lease_expired")).toMatchObject({ rearmed: 1, foreign: 0 });
    expect(armedRows()).toMatchObject([{ id: planted.id, owner: ctx.owner }]);
    expect(rows.audit(S).at(-1)).toMatchObject({ event: "resumed", reason: "lease_expired" });
  });

  it("an overdue countdown within the resume window comes due on the next tick, not inside the recovery", async () => {
    const planted = await plant({ owner: deadOwner(), armedAt: Date.now() - 32_000, deadlineAt: Date.now() - 30_000 });
    const { countdowns, due } = engine();
    expect(await countdowns.recover("restart")).toMatchObject({ fired: 1 });
    expect(due).toEqual([]);
    expect(rows.audit(S).at(-1)).toMatchObject({ event: "resumed", detail: { lateMs: 30_000 } });
    await advance(0);
    expect(due).toMatchObject([{ armed: { row: { id: planted.id } }, info: { lateMs: 30_000, resumed: "restart" } }]);
  });

  it("the resume window is resumeWindowSeconds: late by one ms less fires, late by exactly the window expires", async () => {
    const now = Date.now();
    const windowMs = WINDOW_S * 1000;
    const fires = await plant({ owner: deadOwner(), armedAt: now - windowMs - 2000, deadlineAt: now - windowMs + 1 });
    const expires = await plant({
      sessionId: "ses_stale",
      owner: deadOwner(),
      armedAt: now - windowMs - 2000,
      deadlineAt: now - windowMs,
    });
    const { countdowns, due } = engine();
    expect(await countdowns.recover("restart")).toEqual({ rearmed: 0, fired: 1, expired: 1, foreign: 0 });
    expect(rows.countdowns("ses_stale")).toMatchObject([
      { id: expires.id, state: "expired", end_reason: "stale_after_restart" },
    ]);
    expect(rows.audit("ses_stale").at(-1)).toMatchObject({
      event: "expired",
      reason: "stale_after_restart",
      detail: { lateMs: windowMs, resumeWindowMs: windowMs, deadlineAt: expires.deadlineAt },
    });
    expect(countdowns.has("ses_stale")).toBe(false);
    await advance(0);
    expect(due.map((d) => d.armed.row.id)).toEqual([fires.id]);
  });

  // The lateness of a takeover is the fleet's (a replica that starved, a database outage): the idle the countdown was
  // armed for is looked at afresh, or nobody ever would. After a restart a stale one is simply dropped.
  it("a countdown taken over too late to fire owes its session a fresh look; one found after a restart does not", async () => {
    const windowMs = WINDOW_S * 1000;
    const late = () => ({ armedAt: Date.now() - windowMs - 2000, deadlineAt: Date.now() - windowMs - 1 });
    const { countdowns, due } = engine();
    const restarted = await plant({ sessionId: "ses_restarted", owner: deadOwner(), ...late() });
    expect(await countdowns.recover("restart")).toMatchObject({ expired: 1 });
    const taken = await plant({ sessionId: "ses_taken", owner: deadOwner(), ...late() });
    expect(await countdowns.recover("lease_expired")).toMatchObject({ expired: 1 });
    await advance(0);
    expect(rows.countdowns("ses_taken")).toMatchObject([{ id: taken.id, state: "expired" }]);
    expect(rows.session("ses_taken")).toMatchObject({ recheck_at: Date.now(), owed_since: taken.armedAt });
    expect(rows.countdowns("ses_restarted")).toMatchObject([{ id: restarted.id, state: "expired" }]);
    expect(rows.session("ses_restarted")?.recheck_at ?? null).toBeNull();
    expect(due).toEqual([]);
  });

  it("skips what it already holds: a second recovery adopts and audits nothing", async () => {
    const { countdowns } = engine();
    await countdowns.arm(request(10_000));
    expect(await countdowns.recover("lease_expired")).toEqual({ rearmed: 0, fired: 0, expired: 0, foreign: 0 });
    await plant({ sessionId: "ses_orphan", owner: deadOwner() });
    await countdowns.recover("lease_expired");
    const before = rows.audit().length;
    expect(await countdowns.recover("lease_expired")).toEqual({ rearmed: 0, fired: 0, expired: 0, foreign: 0 });
    expect(rows.audit()).toHaveLength(before);
  });

  it("after dropAll (the store paused) its own rows are adopted again, due at their original deadlines", async () => {
    const { countdowns, ctx, due } = engine();
    const armed = (await countdowns.arm(request(10_000)))!;
    await advance(4000);
    countdowns.dropAll();
    expect(countdowns.size).toBe(0);
    expect(ctx.timers.size).toBe(0);
    expect(armedRows()).toMatchObject([{ id: armed.row.id, owner: ctx.owner }]);
    expect(await countdowns.recover("store_recovered")).toMatchObject({ rearmed: 1 });
    expect(rows.audit(S).at(-1)).toMatchObject({
      event: "resumed",
      reason: "store_recovered",
      detail: { remainingMs: 6000 },
    });
    await advance(5999);
    expect(due).toEqual([]);
    await advance(1);
    expect(due).toHaveLength(1);
  });

  it("a newer countdown of the session that was taken from this process wins over the older one held here", async () => {
    // This process's lease ran out (it was stopped for a while); another engine armed a newer countdown over it and
    // died. Adopting that one must replace the stale one in memory, never run both.
    const { countdowns, ctx, due } = engine();
    const older = (await countdowns.arm(request(60_000)))!;
    await advance(LEASE_MS + 1000);
    const newer = await plant({ owner: deadOwner(), armedAt: Date.now(), deadlineAt: Date.now() + 5000 });
    expect(await countdowns.recover("lease_expired")).toMatchObject({ rearmed: 1 });
    expect(countdowns.get(S)?.row.id).toBe(newer.id);
    expect(ctx.timers.has(`countdown:${older.row.id}`)).toBe(false);
    await advance(60_000);
    expect(due.map((d) => d.armed.row.id)).toEqual([newer.id]);
  });

  it("an adopted countdown replaces the one held here when that one's row was ended elsewhere, even if older", async () => {
    // Only reachable when the held one's row was ended elsewhere and a writer with a slower clock armed another: the
    // adopted row is then the session's only armed one. Left unheld, it would be adopted again on every tick.
    const { countdowns, due } = engine();
    const held = (await countdowns.arm(request(5000)))!;
    await store.change(cancelByKey({ sessionId: S, directory: DIRECTORY }, Date.now(), { source: "tui" }));
    const older = await plant({ owner: deadOwner(), armedAt: Date.now() - 10_000, deadlineAt: Date.now() + 1000 });
    expect(await countdowns.recover("lease_expired")).toMatchObject({ rearmed: 1, fired: 0 });
    expect(countdowns.get(S)?.row.id).toBe(older.id);
    expect(await countdowns.recover("lease_expired")).toMatchObject({ rearmed: 0, fired: 0 });
    await advance(5000);
    expect(due.map((d) => d.armed.row.id)).toEqual([older.id]);
    expect(due.map((d) => d.armed.row.id)).not.toContain(held.row.id);
  });
});

describe("leases", () => {
  it("renewing keeps the countdown this process's: another process finds it held", async () => {
    const a = engine();
    const armed = (await a.countdowns.arm(request(60_000)))!;
    await advance(10_000);
    expect(await a.countdowns.renewLeases()).toBe(1);
    expect(armedRows()).toMatchObject([{ lease_until: Date.now() + LEASE_MS }]);
    await advance(10_000); // past the first lease, within the renewed one
    const b = engine();
    expect(await b.countdowns.recover("lease_expired")).toMatchObject({ rearmed: 0, foreign: 1 });
    expect(armedRows()).toMatchObject([{ id: armed.row.id, owner: a.ctx.owner }]);
  });

  it("a countdown taken over after the lease ran out is never fired here: the claim fails, the new owner's succeeds", async () => {
    const a = engine();
    const b = engine();
    const armed = (await a.countdowns.arm(request(30_000)))!;
    await advance(LEASE_MS + 1);
    expect(await b.countdowns.recover("lease_expired")).toMatchObject({ rearmed: 1 });
    expect(armedRows()).toMatchObject([{ owner: b.ctx.owner }]);
    // The old owner renewing does not take it back.
    expect(await a.countdowns.renewLeases()).toBe(0);
    expect(armedRows()).toMatchObject([{ owner: b.ctx.owner }]);
    await advance(30_000);
    const taken = b.due.map((d) => d.armed);
    expect(taken).toHaveLength(1);
    expect(await a.countdowns.claim(armed, injectionFor(armed, a.ctx.owner, "inj_a"), {})).toBe(false);
    expect(a.countdowns.has(S)).toBe(false);
    expect(await b.countdowns.claim(taken[0]!, injectionFor(taken[0]!, b.ctx.owner, "inj_b"), {})).toBe(true);
    expect(rows.injections(S)).toMatchObject([{ id: "inj_b", owner: b.ctx.owner }]);
    expect(rows.countdowns(S)).toMatchObject([{ state: "fired" }]);
  });

  it("release hands every row back at once: nothing comes due here, a successor adopts them without waiting", async () => {
    const a = engine();
    await a.countdowns.arm(request(5000));
    await a.countdowns.arm(request(5000, { sessionId: "ses_two" }));
    await a.countdowns.release();
    expect(a.countdowns.size).toBe(0);
    expect(a.ctx.timers.size).toBe(0);
    expect(rows.countdowns().map((c) => [c.state, c.owner, c.lease_until])).toEqual([
      ["armed", null, null],
      ["armed", null, null],
    ]);
    const b = engine();
    expect(await b.countdowns.recover("restart")).toMatchObject({ rearmed: 2 });
    await advance(5000);
    expect(a.due).toEqual([]);
    expect(b.due).toHaveLength(2);
  });
});
