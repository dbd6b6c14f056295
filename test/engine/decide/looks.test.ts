// Looks judges an idle. It promises: the guards first run on what is known without OpenCode, and a skip there is
// recorded without a single read of OpenCode, but for a stop it tells after continuations, which the last one's bill
// (one read) comes before; a look that passes them is durable from then on (`recheck_at` is set before OpenCode is
// read, and cleared when the look is judged), so that a process that dies meanwhile is followed by one that looks
// again; activity in the session while OpenCode was read makes it a `busy` skip; a look that passes arms a countdown
// whose `armed` row carries the continuation budget and that a continuation fired since the idle (in any process) keeps
// from arming; a parent held back by busy sub-sessions is owed a look within a minute and is looked at again as soon as
// its last busy one finishes; a todo read that failed owes a look after a backoff; an idle the database kept from being
// judged (a failed write, or the store paused) is looked at again by `lookAgainAtUnjudged`; `recheckOwed` looks at the
// sessions owed a look within the resume window, judging what answered them since they were owed, and expires older
// ones with an `expired` row. Built as enforcer.ts builds it, from the engine's real parts over a real SQLite file and
// the FakeHost, with fake timers.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/resolve.js";
import { FactGatherer } from "../../../src/engine/read/facts.js";
import { Billing } from "../../../src/engine/decide/billing.js";
import { Judge } from "../../../src/engine/decide/judge.js";
import { Looks, type Trigger } from "../../../src/engine/decide/looks.js";
import { StopNotices } from "../../../src/engine/decide/stop-notices.js";
import { Outcomes } from "../../../src/engine/deliver/outcomes.js";
import { DeliveryQueue } from "../../../src/engine/wait/queue.js";
import { StartWatch } from "../../../src/engine/deliver/start-watch.js";
import { OwnMessageIds } from "../../../src/engine/memory/own-messages.js";
import { SessionMemories } from "../../../src/engine/memory/session-memory.js";
import { Countdowns } from "../../../src/engine/wait/countdowns.js";
import { LimitParks } from "../../../src/engine/wait/limit-parks.js";
import { Verifications } from "../../../src/engine/wait/verifications.js";
import { idLine } from "../../../src/core/prompt.js";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { oweLook } from "../../../src/store/changes/look-owed.js";
import { stop } from "../../../src/store/changes/stop.js";
import type { SessionChange } from "../../../src/store/port.js";
import type { Change } from "../../../src/store/script.js";
import type { SqliteStore } from "../../../src/store/sqlite/sqlite-store.js";
import { fireContinuation } from "../../support/continuations.js";
import {
  elsewhere,
  folder,
  liveOwner,
  makeContext,
  quiet,
  remoteOwner,
  rows,
  store,
  type TestContext,
  useTestFiles,
} from "../../support/engine-context.js";
import { DIRECTORY, testConfig } from "../../support/engine-fixture.js";
import { FakeHost } from "../../support/fake-host.js";
import { advance, until } from "../../support/fake-time.js";
import { failChangeOnce } from "../../support/store-spies.js";

const S = "ses_looks";
const COUNTDOWN_MS = 2000;
const BASE_MS = 1000;
const WINDOW_MS = 60_000;
const CHILDREN_RECHECK_MS = 60_000;

const rigs: Rig[] = [];
let rig: Rig;

interface Rig {
  ctx: TestContext;
  host: FakeHost;
  config: Config;
  memories: SessionMemories;
  countdowns: Countdowns;
  queue: DeliveryQueue;
  starts: StartWatch;
  looks: Looks;
}

/** The parts the enforcer builds before Looks, wired as it wires them, on `over` (this process's store by default). */
function build(overrides: Partial<Config> = {}, over: SqliteStore = store): Rig {
  const config = testConfig(join(folder, "state.db"), {
    toast: true,
    countdownSeconds: COUNTDOWN_MS / 1000,
    maxRetries: 2,
    retryBaseMs: BASE_MS,
    retryMaxMs: 8000,
    resumeWindowSeconds: WINDOW_MS / 1000,
    ...overrides,
  });
  const host = new FakeHost();
  host.addUserMessage(S, "build the thing");
  host.setTodos(S, [
    ["a", "pending"],
    ["b", "completed"],
  ]);
  const ctx = makeContext({ store: over, config, owner: liveOwner(), host });
  const queue = new DeliveryQueue(config.maxConcurrentInjections, (error) => ctx.failed("continuation", error));
  const countdowns = new Countdowns(ctx);
  // Looks end at the arm: nothing here shows or attempts a countdown.
  countdowns.connect({ armed: () => undefined, due: () => undefined });
  const facts = new FactGatherer(host, config.hostTimeoutMs, () => ctx.clock.monotonic(), new OwnMessageIds(store));
  const notices = new StopNotices(ctx);
  const outcomes = new Outcomes(ctx, countdowns, notices);
  const starts = new StartWatch(ctx, facts, outcomes);
  const pinned = (id: string) => countdowns.has(id) || queue.isBusy(id) || starts.has(id);
  const memories = new SessionMemories(1000, pinned);
  const billing = new Billing(ctx, facts);
  const judge = new Judge(ctx, memories, queue, notices, billing);
  const limitParks = new LimitParks(ctx);
  const verifications = new Verifications(ctx);
  const looks = new Looks(ctx, {
    memories,
    countdowns,
    judge,
    facts,
    billing,
    queue,
    starts,
    limitParks,
    verifications,
  });
  const built = { ctx, host, config, memories, countdowns, queue, starts, looks };
  rigs.push(built);
  return built;
}

/** Lets the timers due now run, then waits for the looks and state changes under way. */
const settle = (r: Rig = rig) => quiet(r.ctx);

/** Todo reads of `host` wait until `release` is called (an OpenCode slow to answer). */
function holdTodoReads(host: FakeHost) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const getTodos = host.getTodos.bind(host);
  let asked = 0;
  host.getTodos = async (sessionId, signal) => {
    asked++;
    await gate;
    return getTodos(sessionId, signal);
  };
  return { release, asked: () => asked };
}

const scope = (sessionId = S) => ({ sessionId, directory: DIRECTORY });
const write = (update: SessionChange, sessionId = S) =>
  store.change(changeSession(scope(sessionId), Date.now(), update));
/** The session is owed a look by `at` (look-owed.ts). */
const owe = (at: number, sessionId = S) => store.change(oweLook(scope(sessionId), Date.now(), { owe: at }));
const armedRows = (sessionId = S) => rows.countdowns(sessionId).filter((c) => c.state === "armed");
const lastAudit = (sessionId = S) => rows.audit(sessionId).at(-1);

useTestFiles({ elsewhere: true });
beforeEach(() => {
  rig = build();
});

afterEach(() => {
  for (const r of rigs.splice(0)) {
    r.ctx.timers.stop();
    r.queue.stopQueued();
  }
});

describe("the pre-check", () => {
  it("a skip on what is known without OpenCode is recorded without a single read of OpenCode", async () => {
    const stoppedAt = Date.now();
    await store.change(stop(scope(), "cli", stoppedAt));
    await rig.looks.evaluate(S, "idle");
    expect(rig.host.calls).toMatchObject({ todos: 0, messages: 0 });
    expect(lastAudit()).toMatchObject({
      event: "skipped",
      reason: "stopped",
      detail: { stage: "idle", stoppedAt, trigger: "idle" },
    });
    expect(rows.session(S)).toMatchObject({ recheck_at: null });
  });

  it.each([
    { trigger: "restart" as const, owed: true },
    { trigger: "recheck" as const, owed: true },
    { trigger: "resume" as const, owed: true },
    { trigger: "idle" as const, owed: false },
    { trigger: "reevaluate" as const, owed: false },
    { trigger: "children_done" as const, owed: false },
  ])("a look owed to the session ends with its skip: $owed for $trigger", async ({ trigger, owed }) => {
    const owedAt = Date.now() - 1000;
    await write({ continuations: 20 });
    await owe(owedAt);
    await rig.looks.evaluate(S, trigger);
    expect(lastAudit()).toMatchObject({ reason: "budget_exhausted", detail: { trigger } });
    expect(rows.session(S)).toMatchObject({ recheck_at: owed ? null : owedAt });
  });

  it("a skip before OpenCode is read still bills the session's last continuation, from one read of OpenCode", async () => {
    const injection = await fireContinuation(
      store,
      { sessionId: S, owner: "elsewhere/1/x", settled: "sent" },
      rig.config,
    );
    rig.host.addUserMessage(S, `continue\n${idLine(injection.id)}`, { id: injection.messageId! });
    const usage = { cost: 0.25, tokens: { input: 900, output: 100, reasoning: 0, cacheRead: 0, cacheWrite: 0 } };
    rig.host.addAssistantMessage(S, {
      parentId: injection.messageId!,
      usage,
      parts: [{ type: "step-finish", usage }],
    });
    await write({ continuations: 20 });
    await rig.looks.evaluate(S, "idle");
    expect(lastAudit()).toMatchObject({ event: "skipped", reason: "budget_exhausted" });
    expect(await store.reader.all("SELECT injection_id, cost, tokens FROM continuation_bills")).toEqual([
      { injection_id: injection.id, cost: 0.25, tokens: 1000 },
    ]);
    const reads = rig.host.calls.messages;
    expect(reads).toBe(1);
    await rig.looks.evaluate(S, "idle");
    expect(rig.host.calls.messages).toBe(reads);
  });

  it("a stop it tells is decided after that bill: its row and the stop told say what the continuations cost", async () => {
    const injection = await fireContinuation(
      store,
      { sessionId: S, owner: "elsewhere/1/x", settled: "sent" },
      rig.config,
    );
    rig.host.addUserMessage(S, `continue\n${idLine(injection.id)}`, { id: injection.messageId! });
    const usage = { cost: 0.25, tokens: { input: 900, output: 100, reasoning: 0, cacheRead: 0, cacheWrite: 0 } };
    rig.host.addAssistantMessage(S, { parentId: injection.messageId!, usage, parts: [{ type: "step-finish", usage }] });
    await write({ continuations: 20 });
    await rig.looks.evaluate(S, "idle");
    expect(lastAudit()).toMatchObject({
      event: "skipped",
      reason: "budget_exhausted",
      detail: { spent: 0.25, tokens: 1000 },
    });
    expect(rows.session(S)).toMatchObject({
      notified_stop: "budget_exhausted",
      continuation_cost: 0.25,
      continuation_tokens: 1000,
    });
  });

  it("a continuation whose turn OpenCode does not show is asked about once, not at every idle", async () => {
    await fireContinuation(store, { sessionId: S, owner: "elsewhere/1/x", settled: "sent" }, rig.config);
    await write({ continuations: 20 });
    await rig.looks.evaluate(S, "idle");
    await rig.looks.evaluate(S, "idle");
    expect(rig.host.calls.messages).toBe(1);
    expect(await store.reader.all("SELECT injection_id FROM continuation_bills")).toEqual([]);
  });

  it("its own continuation still being delivered: in_flight, and the idle is remembered for when it settles", async () => {
    let release!: () => void;
    rig.queue.add(S, () => new Promise<void>((resolve) => (release = resolve)));
    await until(() => release !== undefined);
    await rig.looks.evaluate(S, "idle");
    expect(rig.memories.get(S).takeIdleWhileInjecting()).toBe(true);
    expect(lastAudit()).toMatchObject({ event: "skipped", reason: "in_flight", detail: { trigger: "idle" } });
    expect(rig.host.calls.todos).toBe(0);
    release();
    await rig.queue.drain();
  });
});

describe("a look that passed the pre-check is durable until judged", () => {
  it("recheck_at is set before OpenCode is read, and cleared when the countdown is armed", async () => {
    const reads = holdTodoReads(rig.host);
    const lookedAt = Date.now();
    const look = rig.looks.evaluate(S, "idle");
    await until(() => reads.asked() === 1);
    expect(rows.session(S)).toMatchObject({ recheck_at: lookedAt });
    expect(rows.audit(S)).toEqual([]);
    await advance(300);
    reads.release();
    await look;
    expect(lastAudit()).toMatchObject({ event: "armed" });
    expect(rows.session(S)).toMatchObject({ recheck_at: null });
  });

  it("cleared as well when the look ends in a skip", async () => {
    rig.host.setTodos(S, [["a", "completed"]]);
    await rig.looks.evaluate(S, "idle");
    expect(lastAudit()).toMatchObject({ event: "skipped", reason: "todos_complete" });
    expect(rows.session(S)).toMatchObject({ recheck_at: null });
  });

  it("a look already owed keeps the time it was owed since while OpenCode is read", async () => {
    const owedAt = Date.now() - 5000;
    await owe(owedAt);
    const reads = holdTodoReads(rig.host);
    const look = rig.looks.evaluate(S, "restart", owedAt);
    await until(() => reads.asked() === 1);
    expect(rows.session(S)).toMatchObject({ recheck_at: owedAt });
    reads.release();
    await look;
    expect(lastAudit()).toMatchObject({ event: "armed", detail: { trigger: "restart" } });
  });

  it("a process that dies while OpenCode is read is followed by one that looks again", async () => {
    const reads = holdTodoReads(rig.host);
    void rig.looks.evaluate(S, "idle");
    await until(() => reads.asked() === 1);
    // The first process never answers again. Its successor, on its own connection, owes the look.
    const successor = build({}, elsewhere);
    await successor.looks.recheckOwed("restart", { expireLate: true });
    await settle(successor);
    expect(successor.host.calls.todos).toBe(1);
    expect(armedRows()).toMatchObject([{ owner: successor.ctx.owner }]);
    expect(lastAudit()).toMatchObject({ event: "armed", detail: { trigger: "restart" } });
    expect(rows.session(S)).toMatchObject({ recheck_at: null });
  });
});

describe("activity while OpenCode is read", () => {
  it.each([
    { activity: "any activity", during: (r: Rig) => r.memories.get(S).sawActivity() },
    { activity: "the session going busy", during: (r: Rig) => r.memories.get(S).sawStatus("busy") },
  ])("$activity: skipped busy, nothing armed, no look owed", async ({ during }) => {
    const reads = holdTodoReads(rig.host);
    const look = rig.looks.evaluate(S, "idle");
    await until(() => reads.asked() === 1);
    during(rig);
    reads.release();
    await look;
    expect(lastAudit()).toMatchObject({
      event: "skipped",
      reason: "busy",
      detail: { stage: "idle", during: "fetch", trigger: "idle" },
    });
    expect(rig.countdowns.has(S)).toBe(false);
    expect(rows.countdowns(S)).toEqual([]);
    expect(rows.session(S)).toMatchObject({ recheck_at: null });
  });
});

describe("arming", () => {
  it("arms for countdownSeconds, the continuation budget in the `armed` row, the agent seen written", async () => {
    await write({ continuations: 3 });
    const now = Date.now();
    await rig.looks.evaluate(S, "idle");
    expect(rig.countdowns.has(S)).toBe(true);
    expect(armedRows()).toMatchObject([
      { owner: rig.ctx.owner, armed_at: now, deadline_at: now + COUNTDOWN_MS, attempt: 0, todos_open: 1 },
    ]);
    expect(lastAudit()).toMatchObject({
      event: "armed",
      detail: { trigger: "idle", continuations: 3, maxContinuations: 20, todosOpen: 1, todosTotal: 2 },
    });
    expect(lastAudit()!.detail).not.toHaveProperty("waitingFor");
    expect(rows.session(S)).toMatchObject({ agent: "build", model_id: "model-1", recheck_at: null });
  });

  it("the budget in the `armed` row counts what `allow` granted", async () => {
    await write({ continuations: 21, allowedContinuations: 5 });
    await rig.looks.evaluate(S, "idle");
    expect(lastAudit()).toMatchObject({ event: "armed", detail: { continuations: 21, maxContinuations: 25 } });
  });

  it("a backoff still running: armed for its end, as the retry it is", async () => {
    const now = Date.now();
    await write({ backoffUntil: now + 5000, consecutiveFailures: 2 });
    await rig.looks.evaluate(S, "reevaluate");
    expect(armedRows()).toMatchObject([{ deadline_at: now + 5000, attempt: 2 }]);
    expect(lastAudit()).toMatchObject({ event: "armed", detail: { trigger: "reevaluate", waitingFor: "backoff" } });
  });

  it("a continuation another process fires between the guards and the arming answered the idle: nothing armed", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let arming = false;
    const change = store.change.bind(store);
    store.change = (async (c: Change<unknown>) => {
      if (c.name === "arm") {
        arming = true;
        await gate;
      }
      return change(c);
    }) as typeof store.change;
    const look = rig.looks.evaluate(S, "idle");
    await until(() => arming);
    await advance(100);
    const fired = await fireContinuation(
      elsewhere,
      { sessionId: S, owner: remoteOwner(), settled: "sent" },
      rig.config,
    );
    open();
    await look;
    expect(rig.countdowns.has(S)).toBe(false);
    expect(rows.countdowns(S).filter((c) => c.owner === rig.ctx.owner)).toEqual([]);
    expect(lastAudit()).toMatchObject({
      event: "skipped",
      reason: "in_flight",
      detail: { stage: "idle", answeredBy: fired.id, firedAt: fired.createdAt, trigger: "idle" },
    });
  });
});

describe("sub-sessions still working", () => {
  beforeEach(() => {
    rig.host.children.set(S, ["ses_child1", "ses_child2"]);
    rig.host.statuses = { ses_child1: "busy", ses_child2: "busy" };
  });

  it("hold the parent, which is owed a look within a minute in case an event is missed", async () => {
    const now = Date.now();
    await rig.looks.evaluate(S, "idle");
    expect(lastAudit()).toMatchObject({
      event: "skipped",
      reason: "children_running",
      detail: { busyChildren: 2, sessions: ["ses_child1", "ses_child2"], trigger: "idle" },
    });
    expect(rows.session(S)).toMatchObject({ recheck_at: now + CHILDREN_RECHECK_MS });
  });

  it("the parent is looked at again as soon as the last busy one finishes, not before", async () => {
    await rig.looks.evaluate(S, "idle");
    const reads = rig.host.calls.todos;
    rig.host.statuses = { ses_child2: "busy" };
    rig.looks.descendantIdle("ses_child1");
    rig.looks.descendantIdle("ses_unrelated");
    await settle();
    expect(rig.host.calls.todos).toBe(reads);
    rig.host.statuses = {};
    rig.looks.descendantIdle("ses_child2");
    await settle();
    expect(rig.host.calls.todos).toBe(reads + 1);
    expect(lastAudit()).toMatchObject({ event: "armed", detail: { trigger: "children_done" } });
    // Looked at once: the wait is over.
    rig.looks.descendantIdle("ses_child2");
    await settle();
    expect(rig.host.calls.todos).toBe(reads + 1);
  });

  it("a parent forgotten (deleted) is not looked at again", async () => {
    await rig.looks.evaluate(S, "idle");
    const reads = rig.host.calls.todos;
    rig.looks.forget(S);
    rig.looks.descendantIdle("ses_child1");
    rig.looks.descendantIdle("ses_child2");
    await settle();
    expect(rig.host.calls.todos).toBe(reads);
  });
});

describe("a todo read that failed", () => {
  it("owes a look after the backoff, through recheck_at; the look that reads the list arms", async () => {
    rig.host.todoBehaviour = "fail";
    await rig.looks.evaluate(S, "idle");
    expect(lastAudit()).toMatchObject({
      event: "skipped",
      reason: "todo_fetch_failed",
      detail: { trigger: "idle", error: "fetch failed", attempt: 1, retryInMs: BASE_MS },
    });
    expect(rows.session(S)).toMatchObject({ recheck_at: Date.now() + BASE_MS });

    await advance(BASE_MS - 1);
    await rig.looks.recheckOwed("recheck");
    await settle();
    expect(rig.host.calls.todos).toBe(1);
    await advance(1);
    await rig.looks.recheckOwed("recheck");
    await settle();
    expect(lastAudit()).toMatchObject({ reason: "todo_fetch_failed", detail: { trigger: "recheck", attempt: 2 } });
    expect(rows.session(S)).toMatchObject({ recheck_at: Date.now() + 2 * BASE_MS });

    rig.host.todoBehaviour = "ok";
    await advance(2 * BASE_MS);
    await rig.looks.recheckOwed("recheck");
    await settle();
    expect(lastAudit()).toMatchObject({ event: "armed", detail: { trigger: "recheck" } });
    expect(rows.session(S)).toMatchObject({ recheck_at: null });
  });
});

describe("idles the database kept from being judged", () => {
  it("an idle seen while the store was paused is looked at once it works again", async () => {
    rig.ctx.lifecycle.enter("paused_store");
    await rig.looks.evaluate(S, "idle");
    rig.looks.owe(S);
    expect(rig.host.calls.todos).toBe(0);
    expect(rows.audit(S)).toEqual([]);
    rig.ctx.lifecycle.enter("running");
    rig.looks.lookAgainAtUnjudged();
    await settle();
    expect(lastAudit()).toMatchObject({ event: "armed", detail: { trigger: "reevaluate" } });
  });

  it("a look asked for while the store is paused (a catch-up after a takeover) is looked at once it works again", async () => {
    rig.ctx.lifecycle.enter("paused_store");
    await rig.looks.evaluate(S, "reevaluate");
    expect(rig.host.calls.todos).toBe(0);
    expect(rows.audit(S)).toEqual([]);
    rig.ctx.lifecycle.enter("running");
    rig.looks.lookAgainAtUnjudged();
    await settle();
    expect(lastAudit()).toMatchObject({ event: "armed", detail: { trigger: "reevaluate" } });
  });

  it("a look the store's pause cut short before its guards ran is looked at once it works again", async () => {
    const paused = rig.looks.evaluate(S, "idle");
    rig.ctx.lifecycle.enter("paused_store");
    await paused;
    expect(rows.audit(S)).toEqual([]);
    rig.ctx.lifecycle.enter("running");
    rig.looks.lookAgainAtUnjudged();
    await settle();
    expect(lastAudit()).toMatchObject({ event: "armed", detail: { trigger: "reevaluate" } });
  });

  it("a look that broke off on a failed write is looked at again, once", async () => {
    failChangeOnce(store, "look-owed", new Error("disk I/O error"));
    await rig.looks.evaluate(S, "idle");
    expect(rig.ctx.failures).toMatchObject([{ error: { message: "disk I/O error" } }]);
    expect(rows.audit(S)).toEqual([]);
    rig.looks.lookAgainAtUnjudged();
    await settle();
    expect(lastAudit()).toMatchObject({ event: "armed", detail: { trigger: "reevaluate" } });
    const reads = rig.host.calls.todos;
    rig.looks.lookAgainAtUnjudged();
    await settle();
    expect(rig.host.calls.todos).toBe(reads);
  });

  it("idles that were judged, armed or skipped, are not looked at again", async () => {
    await rig.looks.evaluate(S, "idle");
    await store.change(stop(scope("ses_stopped"), "cli", Date.now()));
    await rig.looks.evaluate("ses_stopped", "idle");
    const reads = rig.host.calls.todos;
    const audits = rows.audit().length;
    rig.looks.lookAgainAtUnjudged();
    await settle();
    expect(rig.host.calls.todos).toBe(reads);
    expect(rows.audit()).toHaveLength(audits);
  });
});

describe("recheckOwed", () => {
  it("looks at the sessions owed a look within the resume window, and expires older ones with an `expired` row", async () => {
    const now = Date.now();
    const sessions = {
      ses_late: now - WINDOW_MS + 1,
      ses_expired: now - WINDOW_MS,
      ses_not_yet: now + 1,
    };
    for (const [id, recheckAt] of Object.entries(sessions)) {
      rig.host.setTodos(id, [["a", "pending"]]);
      await owe(recheckAt, id);
    }
    await store.change(oweLook({ sessionId: "ses_elsewhere", directory: "/other" }, now, { owe: now }));
    await rig.looks.recheckOwed("restart", { expireLate: true });
    await settle();
    expect(rows.trail("ses_late")).toEqual(["armed"]);
    expect(lastAudit("ses_late")).toMatchObject({ detail: { trigger: "restart" } });
    expect(rows.audit("ses_expired")).toMatchObject([
      {
        event: "expired",
        reason: "stale_after_restart",
        detail: { recheck: true, lateMs: WINDOW_MS, resumeWindowMs: WINDOW_MS },
      },
    ]);
    expect(rows.session("ses_expired")).toMatchObject({ recheck_at: null });
    expect(rows.audit("ses_not_yet")).toEqual([]);
    expect(rows.session("ses_not_yet")).toMatchObject({ recheck_at: now + 1 });
    expect(rows.audit("ses_elsewhere")).toEqual([]);
    expect(rig.host.calls.todos).toBe(1);
  });

  it("beyond the resume window at a takeover or a lease tick, still looks: the lateness was the fleet's", async () => {
    // Found 80 s late by a replica taking the server over, on an overloaded fleet: expiring it lost the session.
    for (const [id, trigger] of [
      ["ses_taken_over", "restart"],
      ["ses_tick", "recheck"],
    ] as const) {
      rig.host.setTodos(id, [["a", "pending"]]);
      await owe(Date.now() - WINDOW_MS - 20_000, id);
      await rig.looks.recheckOwed(trigger);
      await settle();
      expect(rows.trail(id)).toEqual(["armed"]);
      expect(lastAudit(id)).toMatchObject({ detail: { trigger } });
    }
    expect(rows.audit().filter((a) => a.event === "expired")).toEqual([]);
  });

  it("what answered the idle since it was owed counts: a continuation fired after recheck_at holds it", async () => {
    const owedAt = Date.now() - 10_000;
    const fired = await fireContinuation(
      elsewhere,
      { sessionId: S, owner: remoteOwner(), firedAt: owedAt + 5000, settled: "sent" },
      rig.config,
    );
    // Owed since before it went out (its own `sent` owes a look once its start is due: written over here).
    await owe(owedAt);
    await rig.looks.recheckOwed("restart");
    await settle();
    expect(lastAudit()).toMatchObject({
      event: "skipped",
      reason: "in_flight",
      detail: { answeredBy: fired.id, trigger: "restart" },
    });
    expect(armedRows()).toEqual([]);
  });

  // Each holder does its own work; a look started by recheckOwed would show as a read of OpenCode or an audit row more.
  it.each<{ what: string; hold: (r: Rig) => Promise<() => Promise<void>>; reads: number; trail: string[] }>([
    {
      what: "a countdown armed here",
      hold: async (r) => {
        await r.countdowns.arm({ sessionId: S, attempt: 0, delayMs: 10_000, detail: {} });
        return async () => {};
      },
      reads: 0,
      trail: ["armed"],
    },
    {
      what: "a continuation in this process's queue",
      hold: async (r) => {
        let release!: () => void;
        r.queue.add(S, () => new Promise<void>((resolve) => (release = resolve)));
        await until(() => release !== undefined);
        return async () => {
          release();
          await r.queue.drain();
        };
      },
      reads: 0,
      trail: [],
    },
    {
      what: "a continuation whose start is watched",
      hold: async (r) => {
        r.starts.watch(S, "inj_watched", "msg_watched", false);
        return async () => void r.starts.clear();
      },
      reads: 0,
      trail: [],
    },
    {
      what: "a look under way",
      hold: async (r) => {
        const reads = holdTodoReads(r.host);
        const look = r.looks.evaluate(S, "idle");
        await until(() => reads.asked() === 1);
        return async () => {
          reads.release();
          await look;
        };
      },
      reads: 1,
      trail: ["armed"],
    },
  ])("leaves a session to what already works on it here: $what", async ({ hold, reads, trail }) => {
    await owe(Date.now());
    const release = await hold(rig);
    await rig.looks.recheckOwed("recheck");
    await release();
    await settle();
    expect(rig.host.calls.todos).toBe(reads);
    expect(rows.trail(S)).toEqual(trail);
  });
});

const TRIGGERS: Trigger[] = ["idle", "reevaluate", "recheck", "restart", "children_done", "resume"];

describe("a look once the engine stops deciding", () => {
  it.each(TRIGGERS)("%s: nothing read, nothing written", async (trigger) => {
    rig.ctx.lifecycle.enter("disposing");
    await rig.looks.evaluate(S, trigger);
    expect(rig.host.calls).toMatchObject({ todos: 0, messages: 0 });
    expect(rows.session(S)).toBeUndefined();
  });
});
