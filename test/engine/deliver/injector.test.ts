// The injector takes a due countdown to an outcome, and DeliveryChecks finds out what became of a continuation whose
// outcome it does not know. Together they promise: a call that may have delivered is looked for in the session (by
// the message id chosen for it, or the injection id its text carries) before anything is recorded; a continuation
// found is `sent` and never sent again; one possibly delivered is `unknown` and counted; one certainly not delivered is
// `failed` and not counted; every failure is retried with backoff until maxRetries, then the user is told once; a
// `pending` row no live process is working on is settled from the session's messages. Built here from the engine's
// real parts over a hand-made context and a real SQLite file; the cases the enforcer-level tests already walk
// (delivery.test.ts, restart.test.ts) are left to them.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Config } from "../../../src/config.js";
import { BoundedMap } from "../../../src/engine/bounded-map.js";
import { FactGatherer } from "../../../src/engine/decide/facts.js";
import { Judge } from "../../../src/engine/decide/judge.js";
import { StopNotices } from "../../../src/engine/decide/stop-notices.js";
import { Injector } from "../../../src/engine/deliver/injector.js";
import { Lookups } from "../../../src/engine/deliver/lookups.js";
import { Outcomes } from "../../../src/engine/deliver/outcomes.js";
import { DeliveryQueue } from "../../../src/engine/deliver/queue.js";
import { Reconciler } from "../../../src/engine/deliver/reconciler.js";
import { StartWatch } from "../../../src/engine/deliver/start-watch.js";
import { SessionMemories } from "../../../src/engine/see/session-memory.js";
import { Countdowns } from "../../../src/engine/wait/countdowns.js";
import { HostHttpError, type PromptRequest } from "../../../src/host/port.js";
import { arm } from "../../../src/store/changes/arm.js";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { claim } from "../../../src/store/changes/claim.js";
import { recordOutcome } from "../../../src/store/changes/record-outcome.js";
import type { NewInjection } from "../../../src/store/port.js";
import type { SqliteConnection } from "../../../src/store/sqlite/open.js";
import type { SqliteStore } from "../../../src/store/sqlite/sqlite-store.js";
import {
  deadOwner,
  forgetOwners,
  liveOwner,
  makeContext,
  openTestStore,
  quiet,
  remoteOwner,
  type TestContext,
} from "../../support/engine-context.js";
import { DIRECTORY, tempFolder, testConfig, type Rows } from "../../support/engine-fixture.js";
import { FakeHost } from "../../support/fake-host.js";
import { advance, START } from "../../support/fake-time.js";

const S = "ses_injector";
/** What a retry that is not armed was for (only its `armed` row would say it). */
const GIVE_UP = { retryOf: "inj_x", reason: "backoff" } as const;
const BASE_MS = 1000;

let folder: string;
let connection: SqliteConnection;
let store: SqliteStore;
let rows: Rows;
let rig: Rig;

interface Rig {
  ctx: TestContext;
  host: FakeHost;
  countdowns: Countdowns;
  queue: DeliveryQueue;
  injector: Injector;
  outcomes: Outcomes;
  reconciler: Reconciler;
  /** Sessions the injector asked to look at again. */
  looks: string[];
}

/** The parts the enforcer wires around the injector, and nothing else (no event router, no evaluator). */
function build(overrides: Partial<Config> = {}, owner = liveOwner()): Rig {
  const config = testConfig(join(folder, "state.db"), {
    retryBaseMs: BASE_MS,
    retryMaxMs: 8000,
    maxRetries: 3,
    toast: true,
    ...overrides,
  });
  const host = new FakeHost();
  host.addUserMessage(S, "build the thing");
  host.setTodos(S, [
    ["a", "pending"],
    ["b", "pending"],
  ]);
  const ctx = makeContext({ store, config, owner, host });
  const notices = new StopNotices(ctx);
  const facts = new FactGatherer(host, config.hostTimeoutMs, () => ctx.clock.monotonic());
  const queue = new DeliveryQueue(config.maxConcurrentInjections, (error) => ctx.failed("continuation", error));
  const countdowns = new Countdowns(ctx);
  const outcomes = new Outcomes(ctx, countdowns, notices);
  const starts = new StartWatch(ctx, facts, outcomes);
  const memories = new SessionMemories(1000, () => true);
  const judge = new Judge(ctx, memories, queue, notices);
  const lookups = new Lookups(ctx);
  const reconciler = new Reconciler(ctx, lookups, outcomes, queue);
  const ownMessages = new BoundedMap<string, true>(1000);
  const injector = new Injector(ctx, {
    memories,
    queue,
    countdowns,
    judge,
    facts,
    lookups,
    reconciler,
    outcomes,
    starts,
    ownMessages,
  });
  const looks: string[] = [];
  ctx.events.on("countdown_due", ({ armed, info }) => injector.due(armed, info));
  ctx.events.on("look_again", ({ sessionId }) => void looks.push(sessionId));
  rig = { ctx, host, countdowns, queue, injector, outcomes, reconciler, looks };
  return rig;
}

/** Lets `ms` pass, then waits for every attempt and state change under way. */
async function pass(ms = 0) {
  await advance(ms);
  await quiet(rig.ctx, () => rig.queue.drain());
}

/** Microtask turns until `done` holds (the attempt's chain of reads and writes), with no time passing. */
async function until(done: () => boolean) {
  for (let i = 0; i < 100 && !done(); i++) await advance(0);
  expect(done()).toBe(true);
}

/** A countdown of S that is due at once: the attempt under test starts. */
async function attempt(attemptNo = 0) {
  await rig.countdowns.arm({ sessionId: S, attempt: attemptNo, delayMs: 0, detail: { trigger: "test" } });
}

const failures = () => rows.audit(S).filter((r) => r.event === "injection_failed");
const armed = () => rows.countdowns(S).filter((c) => c.state === "armed");
const presetFailures = (n: number) =>
  store.change(changeSession({ sessionId: S, directory: DIRECTORY }, Date.now(), { consecutiveFailures: n }));

/** A prompt call that fails with `error` after OpenCode may (or may not) have written the message. */
function promptThat(error: Error, write?: (request: PromptRequest) => void) {
  const requests: PromptRequest[] = [];
  rig.host.prompt = async (request) => {
    rig.host.calls.prompt++;
    requests.push(request);
    write?.(request);
    throw error;
  };
  return requests;
}

/** A `pending` continuation that `owner` recorded and did not settle (it died, or is still calling). */
async function pendingLeftBy(
  owner: string,
  options: { leaseUntil?: number; messageId?: string; onSent?: string; sessionId?: string } = {},
) {
  const sessionId = options.sessionId ?? S;
  const now = Date.now();
  const countdownId = `cd_left_${sessionId}`;
  await store.change(
    arm(
      {
        id: countdownId,
        sessionId,
        directory: DIRECTORY,
        armedAt: now - 5000,
        deadlineAt: now - 3000,
        owner,
        leaseUntil: now + 60_000,
        attempt: 0,
        todosOpen: 2,
        todosTotal: 2,
      },
      {},
    ),
  );
  const injection: NewInjection = {
    id: `inj_left_${sessionId}`,
    sessionId,
    directory: DIRECTORY,
    countdownId,
    messageId: options.messageId ?? `msg_left_${sessionId}`,
    createdAt: now - 3000,
    agent: "build",
    model: null,
    variant: null,
    todosTotal: 2,
    todosOpen: 2,
    attempt: 0,
    onSent: options.onSent ?? null,
    owner,
    leaseUntil: options.leaseUntil ?? now + 60_000,
  };
  expect(await store.change(claim(injection, {}))).toBe(true);
  return injection;
}

beforeEach(async () => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"] });
  vi.setSystemTime(START);
  folder = tempFolder();
  ({ connection, store, rows } = await openTestStore(folder));
});

afterEach(() => {
  rig?.queue.stopQueued();
  rig?.ctx.timers.stop();
  connection.close();
  rmSync(folder, { recursive: true, force: true });
  forgetOwners();
  vi.useRealTimers();
});

describe("a prompt call that may have delivered is looked for before anything is recorded", () => {
  it.each([
    { how: "by the message id chosen for it", write: (r: PromptRequest) => ({ id: r.messageId!, text: "(edited)" }) },
    { how: "by the injection id its text carries", write: (r: PromptRequest) => ({ id: "msg_other", text: r.text }) },
  ])("$how, once OpenCode had time to write it: found → sent, counted once", async ({ write }) => {
    build();
    promptThat(new HostHttpError("prompt", 502, "bad gateway"), (request) => {
      const { id, text } = write(request);
      rig.host.addUserMessage(S, text, { id });
    });
    await attempt();
    await until(() => rig.host.calls.prompt === 1);
    const readsAtCall = rig.host.calls.messages;
    await advance(299);
    expect(rig.host.calls.messages).toBe(readsAtCall);
    await pass(1);
    expect(rig.host.calls.messages).toBe(readsAtCall + 1);
    expect(rows.injections(S)).toMatchObject([{ status: "sent" }]);
    expect(rows.audit(S).at(-1)).toMatchObject({
      event: "injected",
      detail: { afterError: "prompt: HTTP 502 bad gateway" },
    });
    expect(rows.session(S)).toMatchObject({ continuations: 1, consecutive_failures: 0 });
    expect(failures()).toEqual([]);
    expect(armed()).toEqual([]);
  });

  it("not found after an answer that came back: `failed`, not counted as a continuation, retried after the backoff", async () => {
    build();
    const requests = promptThat(new HostHttpError("prompt", 503, "unavailable"));
    await attempt();
    await pass(300);
    const [injection] = rows.injections(S);
    expect(injection).toMatchObject({ status: "failed", error: "prompt: HTTP 503 unavailable" });
    expect(injection!.message_id).toBe(requests[0]!.messageId);
    expect(failures()).toMatchObject([
      {
        reason: "retrying",
        detail: { injectionId: injection!.id, error: "prompt: HTTP 503 unavailable", attempt: 1, retryInMs: BASE_MS },
      },
    ]);
    const retry = armed();
    expect(retry).toMatchObject([{ attempt: 1 }]);
    const armedAt = retry[0]!.armed_at as number;
    expect(retry[0]!.deadline_at).toBe(armedAt + BASE_MS);
    expect(rows.session(S)).toMatchObject({
      continuations: 0,
      consecutive_failures: 1,
      backoff_until: armedAt + BASE_MS,
    });
    expect(rows.audit(S).at(-1)).toMatchObject({
      event: "armed",
      detail: { attempt: 1, retryOf: injection!.id, reason: "backoff" },
    });
    expect(rig.host.logs).toContainEqual(expect.objectContaining({ level: "warn", message: "continuation failed" }));
  });

  it.each([
    { failure: "a reset connection", behaviour: "fail" as const, reason: "retrying" },
    { failure: "a timeout", behaviour: "hang" as const, reason: "timeout" },
  ])("after $failure, a session that cannot be read: `unknown` ($reason), counted, retried", async (c) => {
    build({ promptTimeoutMs: 500 });
    rig.host.messagesBehaviour = "fail";
    rig.host.promptScript = [c.behaviour];
    await attempt();
    await pass(500 + 300);
    expect(rows.injections(S)).toMatchObject([{ status: "unknown" }]);
    expect(failures()).toMatchObject([{ reason: c.reason, detail: { attempt: 1, retryInMs: BASE_MS } }]);
    // Possibly delivered: it spends the budget like a continuation that went out.
    expect(rows.session(S)).toMatchObject({ continuations: 1, consecutive_failures: 1 });
    expect(armed()).toMatchObject([{ attempt: 1 }]);
    expect(rig.host.logs).toContainEqual(
      expect.objectContaining({ level: "warn", message: "continuation outcome unknown" }),
    );
  });

  it("a reset connection and an unreadable session with no retry left: `unknown`, audited gave_up (not retrying)", async () => {
    build({ maxRetries: 0 });
    rig.host.messagesBehaviour = "fail";
    rig.host.promptScript = ["fail"];
    await attempt();
    await pass(300);
    expect(rows.injections(S)).toMatchObject([{ status: "unknown" }]);
    expect(failures()).toMatchObject([{ reason: "gave_up", detail: { attempt: 1, final: true } }]);
    expect(armed()).toEqual([]);
  });

  it.each([
    { maxRetries: 0, before: 0 },
    { maxRetries: 2, before: 2 },
  ])(
    "the attempt past maxRetries ($maxRetries, $before failed before) gives up: nothing armed, the user told",
    async ({ maxRetries, before }) => {
      build({ maxRetries });
      if (before) await presetFailures(before);
      rig.host.promptDefault = "fail";
      await attempt(before);
      await pass(300);
      const attemptNo = before + 1;
      expect(failures()).toMatchObject([{ reason: "gave_up", detail: { attempt: attemptNo, final: true } }]);
      expect(failures()[0]!.detail).not.toHaveProperty("retryInMs");
      expect(armed()).toEqual([]);
      expect(rows.session(S)).toMatchObject({
        consecutive_failures: attemptNo,
        backoff_until: null,
        notified_stop: "gave_up",
      });
      expect(rig.host.toasts).toMatchObject([
        {
          variant: "warning",
          message: expect.stringMatching(new RegExp(`^Stopped: ${attemptNo} attempts? to continue failed`)),
        },
      ]);
      expect(rig.host.logs).toContainEqual(expect.objectContaining({ level: "error", message: "continuation failed" }));
      // Told once: another give-up for the same reason is not news.
      await rig.outcomes.retry(S, { retry: false, attempt: attemptNo + 1 }, undefined, GIVE_UP);
      expect(rig.host.toasts).toHaveLength(1);
    },
  );
});

describe("afterFailure", () => {
  it("arms the retry the plan asks for, with what it retries", async () => {
    build();
    await rig.outcomes.retry(
      S,
      { retry: true, attempt: 2, delayMs: 4000 },
      { open: 1, total: 2, completed: 1 },
      {
        retryOf: "inj_x",
        reason: "backoff",
      },
    );
    const [retry] = armed();
    expect(retry).toMatchObject({ attempt: 2, todos_open: 1, todos_total: 2 });
    expect((retry!.deadline_at as number) - (retry!.armed_at as number)).toBe(4000);
  });

  it("arms nothing when something counts down for the session already, and nothing once the engine is ending", async () => {
    build();
    await rig.countdowns.arm({ sessionId: S, attempt: 0, delayMs: 2000, detail: {} });
    const plan = { retry: true, attempt: 1, delayMs: 1000 } as const;
    await rig.outcomes.retry(S, plan, undefined, { retryOf: "inj_x", reason: "backoff" });
    expect(rows.countdowns(S)).toMatchObject([{ state: "armed", attempt: 0 }]);
    rig.ctx.lifecycle.enter("disposing");
    await rig.outcomes.retry("ses_other", plan, undefined, GIVE_UP);
    await rig.outcomes.retry("ses_other", { retry: false, attempt: 4 }, undefined, GIVE_UP);
    expect(rows.countdowns("ses_other")).toEqual([]);
    expect(rig.host.toasts).toEqual([]);
  });
});

describe("a countdown that is no longer this process's at the prompt call", () => {
  it("is neither sent nor judged when another owner took it over after this process's lease ran out", async () => {
    build({ leaseMs: 1000 });
    const successorContext = makeContext({ store, config: rig.ctx.config, owner: liveOwner() });
    const successor = new Countdowns(successorContext);
    await rig.countdowns.arm({ sessionId: S, attempt: 0, delayMs: 5000, detail: {} });
    await advance(1001);
    expect(await successor.recover("lease_expired")).toMatchObject({ rearmed: 1 });
    await pass(4000);
    expect(rig.host.calls.prompt).toBe(0);
    expect(rows.injections(S)).toEqual([]);
    expect(armed()).toHaveLength(1);
    // Let go at the deadline (the row is no longer this process's), so its guards end nothing of the successor's.
    expect(armed()[0]).toMatchObject({ owner: successorContext.owner });
    expect(rig.countdowns.get(S)).toBeUndefined();
    successorContext.timers.stop();
  });
});

describe("an earlier continuation found in the session before the next goes out", () => {
  it("a `failed` one that arrived late is counted then, and the retry is not sent on top of it", async () => {
    build();
    const requests = promptThat(new TypeError("fetch failed", { cause: new Error("ECONNRESET") }));
    await attempt();
    await pass(300);
    expect(rows.injections(S)).toMatchObject([{ status: "failed" }]);
    expect(rows.session(S)).toMatchObject({ continuations: 0, consecutive_failures: 1 });
    // OpenCode wrote it after all, after the look-up.
    rig.host.addUserMessage(S, requests[0]!.text, { id: requests[0]!.messageId });
    await pass(BASE_MS);
    expect(rig.host.calls.prompt).toBe(1);
    const [first] = rows.injections(S);
    expect(rows.injections(S)).toMatchObject([{ status: "sent" }]);
    expect(rows.audit(S).find((r) => r.event === "reconciled")).toMatchObject({
      reason: "found",
      detail: { injectionId: first!.id, was: "failed" },
    });
    expect(rows.session(S)).toMatchObject({ continuations: 1, consecutive_failures: 0, backoff_until: null });
    expect(rows.countdowns(S).at(-1)).toMatchObject({ state: "cancelled", end_reason: "in_flight" });
    expect(rows.audit(S).at(-1)).toMatchObject({
      event: "skipped",
      reason: "in_flight",
      detail: { stage: "before_prompt", delivered: first!.id },
    });
    // Its turn ran, so the session is idle again: looked at, but only once the attempt has left the session's queue.
    expect(rig.looks).toEqual([]);
    expect(rig.queue.isBusy(S)).toBe(false);
    // The timer queue's next tick (fake timers put a 0 ms timeout set during a tick 1 ms ahead).
    await advance(1);
    expect(rig.looks).toEqual([S]);
  });

  it.each([
    { age: "exactly an hour", ageMs: 3_600_000, found: true },
    { age: "more than an hour", ageMs: 3_600_001, found: false },
  ])("one $age old is looked for: $found", async ({ ageMs, found }) => {
    build();
    const left = await pendingLeftBy(deadOwner());
    const failed = { kind: "failed", error: "gone", final: false, detail: {} } as const;
    await store.change(recordOutcome(left, failed, Date.now(), rig.ctx.config));
    vi.setSystemTime(left.createdAt + ageMs);
    const messages = { unfinishedQuestion: false, ownInjectionIds: [left.id], ownMessageIds: [] };
    const confirmed = await rig.reconciler.confirmEarlier(S, messages);
    expect(confirmed?.id).toBe(found ? left.id : undefined);
    expect(rows.injections(S)).toMatchObject([{ status: found ? "sent" : "failed" }]);
  });
});

describe("reconciling a `pending` continuation nobody is working on", () => {
  it("found by the message id it was sent with: sent, counted with what it was sent with, nothing sent again", async () => {
    build();
    const onSent = JSON.stringify({ stagnantContinuations: 2, backoffUntil: null });
    const left = await pendingLeftBy(deadOwner(), { messageId: "msg_left_by_id", onSent });
    rig.host.addUserMessage(S, "(no marker in this text)", { id: "msg_left_by_id" });
    await rig.reconciler.reconcilePending();
    await pass();
    expect(rows.injections(S)).toMatchObject([{ id: left.id, status: "sent" }]);
    expect(rows.audit(S).at(-1)).toMatchObject({
      event: "reconciled",
      reason: "found",
      detail: { injectionId: left.id, countdownId: left.countdownId, owner: left.owner },
    });
    expect(rows.session(S)).toMatchObject({ continuations: 1, stagnant_continuations: 2 });
    expect(armed()).toEqual([]);
    expect(rig.host.calls.prompt).toBe(0);
  });

  it("not found: `unknown`, counted, not_found with the retry plan, and the retry armed and sent", async () => {
    build();
    const left = await pendingLeftBy(deadOwner());
    await rig.reconciler.reconcilePending();
    await pass();
    expect(rows.injections(S)).toMatchObject([
      { status: "unknown", error: "not found in the session after a restart" },
    ]);
    expect(rows.audit(S).find((r) => r.event === "reconciled")).toMatchObject({
      reason: "not_found",
      detail: { injectionId: left.id, attempt: 1, retryInMs: BASE_MS },
    });
    expect(rows.session(S)).toMatchObject({ continuations: 1, consecutive_failures: 1 });
    const [retry] = armed();
    expect(retry).toMatchObject({ attempt: 1 });
    expect((retry!.deadline_at as number) - (retry!.armed_at as number)).toBe(BASE_MS);
    expect(rows.audit(S).at(-1)).toMatchObject({ event: "armed", detail: { retryOf: left.id, reason: "not_found" } });
    await pass(BASE_MS);
    expect(rig.host.prompts).toHaveLength(1);
    expect(rows.injections(S).map((i) => i.status)).toEqual(["unknown", "sent"]);
  });

  it("not found with the retries spent: gave up, the user told, nothing armed", async () => {
    build({ maxRetries: 1 });
    await presetFailures(1);
    await pendingLeftBy(deadOwner());
    await rig.reconciler.reconcilePending();
    await pass();
    expect(rows.audit(S).find((r) => r.event === "reconciled")).toMatchObject({
      reason: "not_found",
      detail: { attempt: 2, final: true },
    });
    expect(armed()).toEqual([]);
    expect(rows.session(S)).toMatchObject({ notified_stop: "gave_up" });
    expect(rig.host.toasts).toHaveLength(1);
  });

  it("a session that cannot be read leaves it pending; a later pass settles it", async () => {
    build();
    await pendingLeftBy(deadOwner());
    rig.host.messagesBehaviour = "fail";
    await rig.reconciler.reconcilePending();
    await pass();
    expect(rows.injections(S)).toMatchObject([{ status: "pending" }]);
    expect(rows.audit(S).map((r) => r.event)).not.toContain("reconciled");
    expect(rig.host.logs).toContainEqual(
      expect.objectContaining({ level: "warn", message: "cannot reconcile a pending continuation yet" }),
    );
    rig.host.messagesBehaviour = "ok";
    await rig.reconciler.reconcilePending();
    await pass();
    expect(rows.injections(S)).toMatchObject([{ status: "unknown" }]);
  });

  // Only a row whose owner is gone, or silent past the lease it took for the call, is this process's to settle.
  it.each([
    { owner: "a dead process, within its lease", make: deadOwner, leaseMs: 60_000, settled: true },
    {
      owner: "a live process on another host, within its lease",
      make: () => remoteOwner(),
      leaseMs: 60_000,
      settled: false,
    },
    { owner: "a live process on another host, past its lease", make: () => remoteOwner(), leaseMs: -1, settled: true },
    { owner: "a live engine of this host, within its lease", make: liveOwner, leaseMs: 60_000, settled: false },
  ])("left by $owner: settled $settled", async ({ make, leaseMs, settled }) => {
    build();
    await pendingLeftBy(make(), { leaseUntil: Date.now() + leaseMs });
    await rig.reconciler.reconcilePending();
    await pass();
    expect(rows.injections(S)).toMatchObject([{ status: settled ? "unknown" : "pending" }]);
  });

  it("this process's own row is settled only when no attempt of the session is under way here", async () => {
    build({ promptTimeoutMs: 30_000 });
    rig.host.promptDefault = "hang";
    await attempt();
    await until(() => rig.host.calls.prompt === 1);
    expect(rows.injections(S)).toMatchObject([{ status: "pending", owner: rig.ctx.owner }]);
    const reads = rig.host.calls.messages;
    await rig.reconciler.reconcilePending();
    expect(rig.host.calls.messages).toBe(reads);
    expect(rows.injections(S)).toMatchObject([{ status: "pending" }]);
    // The call's own outcome is what gets recorded, not a reconciliation racing it.
    await pass(30_000 + 300);
    expect(rows.injections(S)).toMatchObject([{ status: "unknown" }]);
    expect(failures()).toMatchObject([{ reason: "timeout" }]);
    expect(rows.audit(S).map((r) => r.event)).not.toContain("reconciled");

    // Left pending by this very process (the store paused mid-call) and nothing under way: settled like any other.
    await pendingLeftBy(rig.ctx.owner, { sessionId: "ses_mine" });
    await rig.reconciler.reconcilePending();
    await pass();
    expect(rows.injections("ses_mine")).toMatchObject([{ status: "unknown" }]);
  });

  it("does nothing while the engine is not deciding (the store paused)", async () => {
    build();
    await pendingLeftBy(deadOwner());
    rig.ctx.lifecycle.enter("paused_store");
    await rig.reconciler.reconcilePending();
    expect(rig.host.calls.messages).toBe(0);
    expect(rows.injections(S)).toMatchObject([{ status: "pending" }]);
  });
});
