// LeaseLoop promises: every third of a lease (never under 100 ms) a tick says this process is alive (the heartbeat, its
// `replicas` row), renews its countdowns' leases, adopts the countdowns nobody holds any more, settles continuations
// left pending by a process that died, and takes the looks owed to sessions. The heartbeat goes out at every tick on
// its own, even while an earlier tick is stuck on the store; a tick still running is not doubled, nor is a heartbeat
// still being written; a tick that fails is reported and the next one runs; nothing happens while the engine is not
// deciding; stop() stops the ticks and resolves once the tick in flight has ended, and a start() once stopped is
// refused. An engine whose owner is its caller's (a fleet replica's) has no timer: its caller
// hands it the rows of its scope, and its tick acts on them without reading them again. Built here from the engine's
// real parts (Countdowns, Reconciler, Looks, wired as in enforcer.ts) over the engine's context and a real SQLite file,
// on fake timers. The whole engine with a stuck tick is test/engine/scenarios/store-failure.test.ts; a fleet replica
// driving its engines' ticks is test/service/fleet-replica.postgres.test.ts.
import { describe, expect, it, vi } from "vitest";
import type { Config } from "../../src/config/resolve.js";
import type { DeliveryQueue } from "../../src/engine/wait/queue.js";
import type { LeaseLoop } from "../../src/engine/lease-loop.js";
import type { Countdowns } from "../../src/engine/wait/countdowns.js";
import { arm } from "../../src/store/changes/arm.js";
import { oweLook } from "../../src/store/changes/look-owed.js";
import { claim } from "../../src/store/changes/claim.js";
import type { EngineStore } from "../../src/store/port.js";
import { leaseRowsIn, type LeaseRows } from "../../src/store/reads.js";
import type { Change, Script } from "../../src/store/script.js";
import { connection, deadOwner, quiet, rows, store, type TestContext } from "../support/engine-context.js";
import { buildPartsRig, useParts } from "../support/parts-rig.js";
import { DIRECTORY } from "../support/engine-fixture.js";
import { FakeHost } from "../support/fake-host.js";
import { advance, START } from "../support/fake-time.js";
import { failChangeOnce, gateChanges } from "../support/store-spies.js";

const LEASE_MS = 3000;
const TICK_MS = LEASE_MS / 3;

let rig: Rig;

interface Rig {
  ctx: TestContext;
  host: FakeHost;
  countdowns: Countdowns;
  queue: DeliveryQueue;
  loop: LeaseLoop;
  /** How many times each kind of state change was asked of the store. */
  changes: Map<string, number>;
  /** How many times the store was asked for a heartbeat. */
  heartbeats: () => number;
}

/** The parts the enforcer builds around the lease loop, built the same way. */
function build(overrides: Partial<Config> = {}, keepsOwner = true): Rig {
  const { ctx, host, parts } = buildPartsRig({ config: { leaseMs: LEASE_MS, ...overrides }, keepsOwner });
  const { queue, countdowns, leases: loop } = parts;
  rig = { ctx, host, countdowns, queue, loop, changes: countChanges(store), heartbeats: countHeartbeats(store) };
  return rig;
}

function countChanges(over: EngineStore): Map<string, number> {
  const counts = new Map<string, number>();
  const original = over.change.bind(over);
  over.change = (<T>(change: Change<T>) => {
    counts.set(change.name, (counts.get(change.name) ?? 0) + 1);
    return original(change);
  }) as EngineStore["change"];
  return counts;
}

function countHeartbeats(over: EngineStore): () => number {
  let calls = 0;
  const original = over.heartbeat.bind(over);
  over.heartbeat = (owner, leaseMs) => {
    calls++;
    return original(owner, leaseMs);
  };
  return () => calls;
}

/** This owner's `replicas` row: what the heartbeat writes. */
const replica = () =>
  connection.raw.all<{ heartbeat_at: number; lease_ms: number }>(
    "SELECT heartbeat_at, lease_ms FROM replicas WHERE id = ?",
    rig.ctx.owner,
  )[0];

const renewals = () => rig.changes.get("renew-leases") ?? 0;

/** Lets `ms` pass, then waits for the ticks it started (and what they started) to finish. */
async function pass(ms: number): Promise<void> {
  await advance(ms);
  await quiet(rig.ctx);
}

/** The lease rows of the engine's scope, as its caller reads them. */
async function leaseRows(): Promise<LeaseRows> {
  const [own] = await store.read(leaseRowsIn([rig.ctx.followed], Date.now()));
  return own!;
}

/** Counts, from now on, the statements of the three reads a tick makes of its scope when it is handed no rows. */
function countLeaseReads(over: EngineStore): () => number {
  let reads = 0;
  const original = over.read.bind(over);
  function* counted<T>(script: Script<T>): Script<T> {
    let step = script.next();
    while (!step.done) {
      if (["armedIn", "pendingIn", "sessionsToRecheck"].includes(step.value.name)) reads++;
      step = script.next(yield step.value);
    }
    return step.value;
  }
  over.read = <T>(script: Script<T>) => original(counted(script));
  return () => reads;
}

/** A continuation a dead process left `pending`, which OpenCode did receive (its message is in the session). */
async function plantPending(sessionId: string): Promise<void> {
  const dead = deadOwner();
  const cd = await plantCountdown(sessionId, dead, -500);
  const now = Date.now();
  await store.change(
    claim(
      {
        id: `inj_${sessionId}`,
        sessionId,
        directory: DIRECTORY,
        countdownId: cd,
        messageId: `msg_${sessionId}`,
        createdAt: now - 500,
        agent: "build",
        model: null,
        variant: null,
        todosTotal: 2,
        todosOpen: 1,
        attempt: 0,
        owner: dead,
        leaseUntil: now + 60_000,
      },
      {},
    ),
  );
  rig.host.addUserMessage(sessionId, "Continue.", { id: `msg_${sessionId}` });
}

/** A countdown of `sessionId` left armed by `owner`, due in `inMs`. */
async function plantCountdown(sessionId: string, owner: string, inMs: number) {
  const now = Date.now();
  const id = `cd_planted_${sessionId}`;
  await store.change(
    arm(
      {
        id,
        sessionId,
        directory: DIRECTORY,
        armedAt: now - 1000,
        deadlineAt: now + inMs,
        owner,
        leaseUntil: now + LEASE_MS,
        attempt: 0,
        todosOpen: 1,
        todosTotal: 2,
      },
      {},
    ),
  );
  return id;
}

useParts();

describe("a tick", () => {
  it("comes every third of the lease, and the first only then", async () => {
    const { loop } = build();
    loop.start();
    await pass(TICK_MS - 1);
    expect(replica()).toBeUndefined();
    await pass(1);
    expect(replica()).toEqual({ heartbeat_at: START.getTime() + TICK_MS, lease_ms: LEASE_MS });
    await pass(TICK_MS);
    expect(replica()?.heartbeat_at).toBe(START.getTime() + 2 * TICK_MS);
    expect(rig.heartbeats()).toBe(2);
  });

  it("never more often than every 100 ms, however short the lease", async () => {
    const { loop } = build({ leaseMs: 150 });
    loop.start();
    await pass(99);
    expect(rig.heartbeats()).toBe(0);
    await pass(1);
    expect(rig.heartbeats()).toBe(1);
    await pass(100);
    expect(rig.heartbeats()).toBe(2);
  });

  it("says this process is alive, renews its leases, adopts what nobody holds, settles what the dead left pending, and takes the looks owed", async () => {
    const { loop, countdowns, ctx } = build();
    // Ours, armed here: its lease is renewed.
    const ours = (await countdowns.arm({ sessionId: "ses_ours", attempt: 0, delayMs: 60_000, detail: {} }))!;
    expect(rows.countdowns("ses_ours")).toMatchObject([{ lease_until: START.getTime() + LEASE_MS }]);
    // A dead process's countdown: adopted.
    const orphan = await plantCountdown("ses_orphan", deadOwner(), 30_000);
    // A dead process's continuation, pending, that OpenCode did receive: settled `sent`.
    await plantPending("ses_pending");
    // A session owed a look.
    await store.change(oweLook(ctx.scope("ses_owed"), Date.now(), { owe: Date.now() - 10 }));

    loop.start();
    await pass(TICK_MS);

    const tickAt = START.getTime() + TICK_MS;
    expect(replica()?.heartbeat_at).toBe(tickAt);
    expect(rows.countdowns("ses_ours")).toMatchObject([
      { id: ours.row.id, state: "armed", owner: ctx.owner, lease_until: tickAt + LEASE_MS },
    ]);
    expect(rows.countdowns("ses_orphan")).toMatchObject([{ id: orphan, state: "armed", owner: ctx.owner }]);
    expect(rows.audit("ses_orphan")).toContainEqual(
      expect.objectContaining({ event: "resumed", reason: "lease_expired" }),
    );
    expect(countdowns.has("ses_orphan")).toBe(true);
    expect(rows.injections("ses_pending")).toMatchObject([{ id: "inj_ses_pending", status: "sent" }]);
    expect(rows.audit("ses_owed")).toMatchObject([{ event: "skipped", detail: { trigger: "recheck" } }]);
    expect(rows.session("ses_owed")).toMatchObject({ recheck_at: null });
    expect(ctx.failures).toEqual([]);
  });
});

describe("the tick of an engine whose owner is its caller's (a fleet replica's)", () => {
  it("comes on no timer: only on the rows its caller hands it, acted on as any tick's, without reading them again", async () => {
    const { loop, countdowns, changes, ctx } = build({}, false);
    const ours = (await countdowns.arm({ sessionId: "ses_ours", attempt: 0, delayMs: 60_000, detail: {} }))!;
    const orphan = await plantCountdown("ses_orphan", deadOwner(), 30_000);
    await plantPending("ses_pending");
    await store.change(oweLook(ctx.scope("ses_owed"), Date.now(), { owe: Date.now() - 10 }));
    loop.start();
    await pass(10 * TICK_MS);
    expect(rows.countdowns("ses_orphan")).toMatchObject([{ id: orphan, owner: expect.stringContaining("/dead") }]);

    const given = await leaseRows();
    const reads = countLeaseReads(store);
    await loop.tickOn(given);
    await quiet(ctx);
    // No heartbeat, no renewal: its lease is left as it was armed (the caller renews it).
    expect(rig.heartbeats()).toBe(0);
    expect(changes.get("renew-leases") ?? 0).toBe(0);
    expect(replica()).toBeUndefined();
    expect(rows.countdowns("ses_ours")).toMatchObject([{ id: ours.row.id, lease_until: START.getTime() + LEASE_MS }]);
    // The rest as any tick: the orphan adopted, the pending continuation settled, the look owed taken.
    expect(rows.countdowns("ses_orphan")).toMatchObject([{ id: orphan, owner: ctx.owner }]);
    expect(rows.audit("ses_orphan")).toContainEqual(
      expect.objectContaining({ event: "resumed", reason: "lease_expired" }),
    );
    expect(rows.injections("ses_pending")).toMatchObject([{ id: "inj_ses_pending", status: "sent" }]);
    expect(rows.audit("ses_owed")).toMatchObject([{ event: "skipped", detail: { trigger: "recheck" } }]);
    // Not one of the three reads of its own: the rows given were the tick's.
    expect(reads()).toBe(0);
    expect(ctx.failures).toEqual([]);
    await expect(loop.heartbeat()).resolves.toBeUndefined();
    expect(rig.heartbeats()).toBe(0);
  });

  it("takes no rows before start(), after stop(), or while its last tick still runs", async () => {
    // Before build(): the rig counts the changes asked for, gated or not.
    const stuck = gateChanges(store, "adopt", "before");
    const { loop, changes, ctx } = build({}, false);
    await plantCountdown("ses_orphan", deadOwner(), 30_000);
    const given = await leaseRows();
    const ticks = [loop.tickOn(given)];
    await advance(0);
    expect(changes.get("adopt") ?? 0).toBe(0);
    loop.start();
    ticks.push(loop.tickOn(given));
    await advance(0);
    expect(changes.get("adopt")).toBe(1);
    // Its adoption is under way: the same rows again are not acted on twice.
    ticks.push(loop.tickOn(given));
    await advance(0);
    expect(changes.get("adopt")).toBe(1);
    stuck.open();
    await Promise.all(ticks);
    await quiet(ctx);
    expect(rows.countdowns("ses_orphan")).toMatchObject([{ owner: ctx.owner }]);
    loop.stop();
    await plantCountdown("ses_later", deadOwner(), 30_000);
    await loop.tickOn(await leaseRows());
    await quiet(ctx);
    expect(changes.get("adopt")).toBe(1);
    expect(rows.countdowns("ses_later")).toMatchObject([{ owner: expect.stringContaining("/dead") }]);
  });
});

describe("a tick stuck on the store", () => {
  it("does not hold up the heartbeat of the ticks after it, and is not doubled", async () => {
    // Before build(): the rig counts the changes asked for, gated or not.
    const stuck = gateChanges(store, "renew-leases", "before");
    const { loop } = build();
    try {
      loop.start();
      for (let tick = 1; tick <= 10; tick++) {
        await advance(TICK_MS);
        expect(replica()?.heartbeat_at).toBe(START.getTime() + tick * TICK_MS);
      }
      expect(rig.heartbeats()).toBe(10);
      expect(renewals()).toBe(1);
    } finally {
      stuck.open();
    }
    await pass(0);
    // The stuck tick finished; the next one runs whole again.
    await pass(TICK_MS);
    expect(renewals()).toBe(2);
    expect(rig.heartbeats()).toBe(11);
  });

  it("a heartbeat still being written is joined, not doubled, by the ticks meanwhile and by heartbeat()", async () => {
    const { loop } = build();
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const write = store.heartbeat.bind(store);
    let writes = 0;
    store.heartbeat = async (owner, leaseMs) => {
      writes++;
      await slow;
      return write(owner, leaseMs);
    };
    loop.start();
    await advance(TICK_MS);
    const joined = loop.heartbeat();
    expect(loop.heartbeat()).toBe(joined);
    await advance(5 * TICK_MS);
    expect(writes).toBe(1);
    expect(renewals()).toBe(0);
    release();
    await joined;
    await quiet(rig.ctx);
    expect(replica()).toBeDefined();
    // The first tick went on once its heartbeat was written; the ticks meanwhile did not run the rest twice.
    expect(renewals()).toBe(1);
    // Written: the next heartbeat is a new one.
    await pass(TICK_MS);
    expect(writes).toBe(2);
    expect(renewals()).toBe(2);
  });

  it("a tick that fails is reported, and the next tick runs whole", async () => {
    const broken = new Error("database is locked");
    failChangeOnce(store, "renew-leases", broken);
    const { loop, ctx } = build();
    loop.start();
    await pass(TICK_MS);
    expect(ctx.failures).toEqual([{ operation: "background job", error: broken }]);
    await pass(TICK_MS);
    expect(renewals()).toBe(2);
    expect(rig.changes.get("adopt") ?? 0).toBe(0);
    expect(ctx.failures).toHaveLength(1);
  });
});

describe("while the engine is not deciding", () => {
  it("a tick does nothing, not even the heartbeat; once it decides again, the ticks do", async () => {
    const { loop, ctx } = build();
    await plantCountdown("ses_orphan", deadOwner(), 30_000);
    ctx.lifecycle.enter("paused_store");
    loop.start();
    await pass(5 * TICK_MS);
    expect(rig.heartbeats()).toBe(0);
    expect(replica()).toBeUndefined();
    expect(renewals()).toBe(0);
    expect(rows.countdowns("ses_orphan")).toMatchObject([{ owner: expect.stringContaining("/dead") }]);
    ctx.lifecycle.enter("running");
    await pass(TICK_MS);
    expect(rig.heartbeats()).toBe(1);
    expect(rows.countdowns("ses_orphan")).toMatchObject([{ owner: ctx.owner }]);
  });
});

describe("stop()", () => {
  it("no tick comes after it; a second start() before it added no second tick", async () => {
    const { loop } = build();
    loop.start();
    loop.start();
    await pass(TICK_MS);
    expect(rig.heartbeats()).toBe(1);
    loop.stop();
    await pass(10 * TICK_MS);
    expect(rig.heartbeats()).toBe(1);
    expect(replica()?.heartbeat_at).toBe(START.getTime() + TICK_MS);
  });

  it("start() once stopped is refused and starts nothing (the engine stops its loop after its own start: enforcer.test.ts)", async () => {
    const { loop } = build();
    await loop.stop();
    const timers = vi.getTimerCount();
    await expect(loop.start()).rejects.toThrow("the lease loop was stopped: it cannot start again");
    // No interval is left behind to outlive the engine (its ticks would do nothing, but keep running).
    expect(vi.getTimerCount()).toBe(timers);
    await pass(10 * TICK_MS);
    expect(rig.heartbeats()).toBe(0);
  });

  it("waits for the tick in flight: it resolves once the tick stuck on the store has ended", async () => {
    // Before build(): the rig counts the changes asked for, gated or not.
    const stuck = gateChanges(store, "renew-leases", "before");
    const { loop, ctx } = build();
    await loop.start();
    await advance(TICK_MS);
    expect(rig.changes.get("renew-leases")).toBe(1);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await advance(0);
    expect(stopped).toBe(false);
    stuck.open();
    await stopping;
    expect(stopped).toBe(true);
    await pass(10 * TICK_MS);
    expect(renewals()).toBe(1);
    expect(ctx.failures).toEqual([]);
  });

  it("before start() is harmless", async () => {
    const { loop } = build();
    let stopping: Promise<void> | undefined;
    expect(() => (stopping = loop.stop())).not.toThrow();
    await stopping;
    expect(rig.heartbeats()).toBe(0);
  });
});

describe("heartbeat()", () => {
  it("writes this owner's `replicas` row with the lease, as of now", async () => {
    const { loop } = build();
    await loop.heartbeat();
    expect(replica()).toEqual({ heartbeat_at: START.getTime(), lease_ms: LEASE_MS });
    await advance(500);
    await loop.heartbeat();
    expect(replica()?.heartbeat_at).toBe(START.getTime() + 500);
  });
});
