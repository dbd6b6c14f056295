// The database failing under a running engine: one clear error, no throw, nothing decided without its audit row,
// and a clean resume once the file works again.
import Database from "better-sqlite3";
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ev } from "../../support/events.js";
import { startEngine, type EngineFixture } from "../../support/engine-fixture.js";

const S = "ses_store";
let f: EngineFixture | undefined;

afterEach(async () => {
  await f?.destroy();
  f = undefined;
  vi.useRealTimers();
});

/** How long a state may take to come on a loaded machine (real timers here: the store's own timing is tested). */
const WAIT = { timeout: 10_000, interval: 20 };

const errors = (fx: EngineFixture) => fx.host.logs.filter((l) => l.level === "error").map((l) => l.message);

describe("a database that fails under a running engine", () => {
  it("locked by another process: pauses with one error, keeps handling events, resumes when the lock is gone", async () => {
    f = await startEngine({ config: { countdownSeconds: 0.3, busyTimeoutMs: 50, storeProbeMs: 200, toast: false } });
    f.host.addUserMessage(S, "go");
    f.host.setTodos(S, [["a", "pending"]]);
    const locker = new Database(f.dbPath);
    locker.exec("BEGIN EXCLUSIVE");
    f.enforcer.handleEvent(ev.idle(S));
    await f.enforcer.settled();
    for (let i = 0; i < 50; i++) expect(() => f!.enforcer.handleEvent(ev.idle(S))).not.toThrow();
    await f.enforcer.settled();
    expect(f.enforcer.stats().storeProblem).toBe("locked");
    expect(errors(f)).toHaveLength(1);
    expect(errors(f)[0]).toMatch(
      /^todo-continuation paused: the database .* is locked by another process .* OpenCode is not affected; it is tried again every 0\.2 s\.$/,
    );
    locker.exec("ROLLBACK");
    locker.close();
    // Waits for the state, not for a time: on a loaded machine the probe's timer may run late.
    await vi.waitFor(() => expect(f!.enforcer.stats().storeProblem).toBeUndefined(), WAIT);
    expect(f.host.logs.some((l) => /^todo-continuation resumed: the database .* works again/.test(l.message))).toBe(
      true,
    );
    // The idles it could not judge while the file was locked are judged now, with no new event: one continuation.
    await vi.waitFor(() => expect(f!.host.prompts).toHaveLength(1), WAIT);
    await f.enforcer.settled();
    expect(f.host.prompts).toHaveLength(1);
    expect(f.rows.audit(S).find((r) => r.event === "armed")?.detail.trigger).toBe("reevaluate");
    expect(errors(f)).toHaveLength(1);
  });

  it("an idle that comes while the database is paused is judged once it works again", async () => {
    f = await startEngine({ config: { countdownSeconds: 0.3, busyTimeoutMs: 50, storeProbeMs: 200, toast: false } });
    f.host.addUserMessage(S, "go");
    f.host.setTodos(S, [["a", "pending"]]);
    const locker = new Database(f.dbPath);
    locker.exec("BEGIN EXCLUSIVE");
    // Another session's look fails on the lock and pauses the enforcer; then this one goes idle, unseen by the file.
    f.enforcer.handleEvent(ev.idle("ses_other"));
    await vi.waitFor(() => expect(f!.enforcer.stats().storeProblem).toBe("locked"), WAIT);
    f.enforcer.handleEvent(ev.idle(S));
    await f.enforcer.settled();
    expect(f.host.prompts).toEqual([]);
    locker.exec("ROLLBACK");
    locker.close();
    await vi.waitFor(() => expect(f!.host.prompts.map((p) => p.sessionId)).toEqual([S]), WAIT);
    expect(f.rows.trail(S)).toEqual(["armed", "fired", "injected"]);
  });

  it("a countdown armed before the failure is adopted again after it, and its guards see what happened meanwhile", async () => {
    f = await startEngine({ config: { countdownSeconds: 0.5, busyTimeoutMs: 50, storeProbeMs: 300, toast: false } });
    f.host.addUserMessage(S, "go");
    f.host.setTodos(S, [["a", "pending"]]);
    f.enforcer.handleEvent(ev.idle(S));
    await f.enforcer.settled();
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "armed" }]);
    const locker = new Database(f.dbPath);
    locker.exec("BEGIN EXCLUSIVE");
    // The session goes busy while the file is locked: the cancel cannot be written, but the fact is remembered.
    f.enforcer.handleEvent(ev.status(S, "busy"));
    await f.enforcer.settled();
    expect(f.enforcer.stats().storeProblem).toBe("locked");
    f.enforcer.handleEvent(ev.delta(S));
    locker.exec("ROLLBACK");
    locker.close();
    await vi.waitFor(() => expect(f!.rows.trail(S)).toContain("skipped:busy"), WAIT);
    await f.enforcer.settled();
    expect(f.host.prompts).toEqual([]);
    expect(f.rows.trail(S)).toEqual(["armed", "resumed:store_recovered", "skipped:busy"]);
  });

  it("deleted while open: the next lease tick notices, pauses with one error and stays paused", async () => {
    f = await startEngine({ config: { countdownSeconds: 0.2, leaseMs: 600, toast: false } });
    f.host.setTodos(S, [["a", "pending"]]);
    rmSync(f.dbPath);
    rmSync(`${f.dbPath}-wal`, { force: true });
    rmSync(`${f.dbPath}-shm`, { force: true });
    await vi.waitFor(() => expect(f!.enforcer.stats().storeProblem).toBe("gone"), WAIT);
    expect(errors(f)).toEqual([
      expect.stringMatching(/was deleted or replaced while this process had it open.* restart OpenCode/),
    ]);
    f.enforcer.handleEvent(ev.idle(S));
    await f.enforcer.settled();
    // Nothing armed and nothing scheduled (not even a probe: only a restart replaces a deleted file), so nothing can
    // be sent later either.
    expect(f.enforcer.stats()).toMatchObject({ mode: "paused_store", storeProblem: "gone", armed: 0, timers: 0 });
    expect(f.host.prompts).toEqual([]);
    expect(errors(f)).toHaveLength(1);
  });
});

describe("a database that is slow under a running engine", () => {
  // On PostgreSQL a lease tick's statements wait in the pool behind a burst of state changes, while the heartbeat has
  // a connection of its own. Held up behind the rest of the tick past the lease, it let the other processes take over
  // the countdowns of one alive and well (thousands of times in the 4-process PostgreSQL test).
  it("a lease tick stuck on the store does not hold up the heartbeats of the ticks after it", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"] });
    f = await startEngine({ config: { leaseMs: 3000, toast: false } });
    let open!: () => void;
    const stuck = new Promise<void>((resolve) => (open = resolve));
    const original = f.port.change.bind(f.port);
    const renewals = vi
      .spyOn(f.port, "change")
      .mockImplementation((change) =>
        change.name === "renew-leases" ? (stuck.then(() => 0) as never) : original(change),
      );
    const heartbeats = vi.spyOn(f.port, "heartbeat");
    try {
      await vi.advanceTimersByTimeAsync(10_000); // ten ticks, one a second
      expect(heartbeats.mock.calls.length).toBeGreaterThanOrEqual(9);
      expect(renewals).toHaveBeenCalledTimes(1); // the stuck tick is not doubled
    } finally {
      open(); // else a failed assertion leaves the engine's dispose waiting for the stuck tick
    }
    await vi.advanceTimersByTimeAsync(1000);
    expect(renewals).toHaveBeenCalledTimes(2);
  });

  it("a countdown whose arming is answered only after the database failed is adopted once it works again", async () => {
    f = await startEngine({ config: { countdownSeconds: 0.3, busyTimeoutMs: 50, storeProbeMs: 200, toast: false } });
    f.host.addUserMessage(S, "go");
    f.host.setTodos(S, [["a", "pending"]]);
    // The arming's transaction commits, but its answer comes late (PostgreSQL shutting down as it committed).
    const port = f.port;
    const change = port.change.bind(port);
    let answer!: () => void;
    const late = new Promise<void>((resolve) => (answer = resolve));
    let answered = false;
    port.change = (async (script: Parameters<typeof change>[0]) => {
      const result = await change(script);
      if (script.name === "arm" && script.session === S) await late.then(() => (answered = true));
      return result;
    }) as typeof port.change;
    f.enforcer.handleEvent(ev.idle(S));
    await vi.waitFor(() => expect(f!.rows.countdowns(S)).toMatchObject([{ state: "armed" }]), WAIT);
    const deadlineAt = Number(f.rows.countdowns(S)[0]!.deadline_at);
    const locker = new Database(f.dbPath);
    locker.exec("BEGIN EXCLUSIVE");
    f.enforcer.handleEvent(ev.idle("ses_other"));
    await vi.waitFor(() => expect(f!.enforcer.stats().storeProblem).toBe("locked"), WAIT);
    answer();
    // Answered while paused, and its deadline passed while paused.
    await vi.waitFor(() => expect(answered && Date.now() > deadlineAt + 200).toBe(true), WAIT);
    locker.exec("ROLLBACK");
    locker.close();
    await vi.waitFor(() => expect(f!.host.prompts.map((p) => p.sessionId)).toEqual([S]), WAIT);
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "fired" }]);
  });
});

describe("a continuation whose outcome is lost with the database", () => {
  // The prompt went out, then the database stopped before its outcome was written: the row stays `pending`, so the
  // turn's idle is skipped `in_flight`. Once the reconciler finds it in the session, the session must be looked at
  // again — else it waits with open todos for an idle that already came (lost work in the fleet benchmark).
  it("is found once the database works again, and the session continues", async () => {
    f = await startEngine({
      config: {
        countdownSeconds: 0.3,
        busyTimeoutMs: 50,
        storeProbeMs: 200,
        leaseMs: 900,
        startTimeoutMs: 1000,
        toast: false,
      },
    });
    f.host.addUserMessage(S, "go");
    f.host.setTodos(S, [["a", "pending"]]);
    const fx = f;
    let locker: Database.Database | undefined;
    fx.host.onAccepted = () => {
      if (locker) return;
      locker = new Database(fx.dbPath);
      locker.exec("BEGIN EXCLUSIVE");
    };
    f.enforcer.handleEvent(ev.idle(S));
    await vi.waitFor(() => expect(fx.enforcer.stats().storeProblem).toBe("locked"), WAIT);
    expect(fx.host.prompts).toHaveLength(1);
    // The continuation's turn ends while the file is locked.
    f.enforcer.handleEvent(ev.status(S, "busy"));
    f.enforcer.handleEvent(ev.idle(S));
    await f.enforcer.settled();
    locker!.exec("ROLLBACK");
    locker!.close();
    await vi.waitFor(() => expect(fx.host.prompts).toHaveLength(2), WAIT);
    expect(fx.rows.trail(S)).toContain("reconciled:found");
    expect(fx.rows.injections(S).map((r) => r.status)).toEqual(["sent", expect.any(String)]);
  });
});
