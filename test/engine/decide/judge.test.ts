// Judge runs the guard chain for one session and records its skips. It promises: a decision reads the session's row
// and, for the idle a look judges (`idleSince`), what answered that idle since in any process — the TUI's key, a
// continuation that went out — and whether a continuation is recorded `pending`, and gives them to the core with what
// this process saw in events; this process's own delivery queue counts as a continuation in flight only at the idle
// (at the deadline and before the prompt the job asking is that queue's own); a todo list OpenCode answered is
// remembered and ends a run of failed reads; a failed todo read is owed another look after a backoff (`recheck_at`)
// until maxRetries reads in a row failed, then none until the next idle; a skip is its audit row written with its
// session change in one transaction, and a skip that ends continuation owes the user one stop notice, once. Built as
// enforcer.ts builds it, over a real SQLite file and the FakeHost; "another process" writes through a second
// connection to the same file.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/resolve.js";
import type { Stage } from "../../../src/core/decision.js";
import type { SkipReason } from "../../../src/core/reasons.js";
import type { Todo } from "../../../src/core/todos.js";
import type { HostFacts } from "../../../src/engine/read/facts.js";
import { Billing } from "../../../src/engine/decide/billing.js";
import { FactGatherer } from "../../../src/engine/read/facts.js";
import { Judge, type Skip } from "../../../src/engine/decide/judge.js";
import { StopNotices } from "../../../src/engine/decide/stop-notices.js";
import { DeliveryQueue } from "../../../src/engine/wait/queue.js";
import { SessionMemories } from "../../../src/engine/memory/session-memory.js";
import { oweLook, TAKE } from "../../../src/store/changes/look-owed.js";
import { stop } from "../../../src/store/changes/stop.js";
import { fireContinuation, pressCancelKey } from "../../support/continuations.js";
import {
  elsewhere,
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
import { FakeHost } from "../../support/fake-host.js";
import { advance } from "../../support/fake-time.js";

const S = "ses_judge";
const SCOPE = { sessionId: S, directory: DIRECTORY };
const BASE_MS = 1000;
const MAX_RETRIES = 2;

let config: Config;
let ctx: TestContext;
let host: FakeHost;
let memories: SessionMemories;
let queue: DeliveryQueue;
let judge: Judge;

/** The judge as the enforcer builds it: on the context, session memory, the delivery queue and the stop notices. */
function build(overrides: Partial<Config> = {}) {
  config = testConfig(join(folder, "state.db"), {
    toast: true,
    maxRetries: MAX_RETRIES,
    retryBaseMs: BASE_MS,
    retryMaxMs: 8000,
    ...overrides,
  });
  host = new FakeHost();
  ctx = makeContext({ store, config, owner: liveOwner(), host });
  queue = new DeliveryQueue(config.maxConcurrentInjections, (error) => ctx.failed("continuation", error));
  const notices = new StopNotices(ctx);
  memories = new SessionMemories(1000, (id) => queue.isBusy(id));
  judge = new Judge(
    ctx,
    memories,
    queue,
    notices,
    new Billing(ctx, new FactGatherer(host, config.hostTimeoutMs, () => ctx.clock.monotonic())),
  );
}

const todos = (...statuses: string[]): Todo[] =>
  statuses.map((status, i) => ({ content: `todo ${i}`, status, priority: "medium" }));

/** What OpenCode answers for a session idle with open todos and nothing else going on. */
const openWork = (): HostFacts => ({ todos: todos("pending", "completed"), status: "idle", busyDescendants: [] });

/** Continuations held in the queue, let go after each test. */
const held: Array<() => void> = [];

/** A continuation of `sessionId` queued in this process, held until the returned function is called. */
function busyQueue(sessionId = S): () => void {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  queue.add(sessionId, () => done);
  expect(queue.isBusy(sessionId)).toBe(true);
  held.push(release);
  return release;
}

const skip = (reason: SkipReason, detail: Record<string, unknown> = {}): Skip => ({ verdict: "skip", reason, detail });
/** The skip a decision at `stage` says (the core names the stage in its detail). */
const said = (stage: Stage, reason: SkipReason, detail: Record<string, unknown> = {}) =>
  skip(reason, { stage, ...detail });

useTestFiles({ elsewhere: true });
beforeEach(() => {
  build();
});

afterEach(async () => {
  ctx.timers.stop();
  queue.stopQueued();
  for (const release of held.splice(0)) release();
  await queue.drain();
});

describe("decide: the session's row", () => {
  it("with no row yet and open work, continues; the row it read comes back with the decision", async () => {
    const { decision, row } = await judge.decide(S, "idle", openWork(), { idleSince: Date.now() });
    expect(decision).toMatchObject({ verdict: "continue", summary: { open: 1, total: 2, completed: 1 } });
    expect(row).toBeUndefined();
  });

  it("a stop written by another process holds the session at every stage", async () => {
    const stoppedAt = Date.now();
    await elsewhere.change(stop(SCOPE, "cli", stoppedAt));
    for (const stage of ["idle", "deadline", "before_prompt"] as const) {
      const { decision, row } = await judge.decide(S, stage, openWork());
      expect(decision).toEqual(said(stage, "stopped", { stoppedAt, stopSource: "cli" }));
      expect(row).toMatchObject({ sessionId: S, stoppedAt, stopSource: "cli" });
    }
  });
});

describe("decide: what answered the idle since it was seen", () => {
  it("the TUI's key pressed in another process since the idle: user_key, with when", async () => {
    const idleSince = Date.now();
    await advance(300);
    const pressedAt = Date.now();
    await pressCancelKey(elsewhere, S, remoteOwner(), pressedAt);
    const { decision } = await judge.decide(S, "idle", openWork(), { idleSince: idleSince });
    expect(decision).toEqual(said("idle", "user_key", { cancelledAt: pressedAt }));
  });

  it("the key pressed before the idle, or a look that does not say since when (the pre-check), is not an answer", async () => {
    await pressCancelKey(elsewhere, S, remoteOwner());
    await advance(1);
    expect((await judge.decide(S, "idle", openWork(), { idleSince: Date.now() })).decision.verdict).toBe("continue");
    expect((await judge.decide(S, "idle")).decision.verdict).toBe("continue");
  });

  it.each(["sent", "unknown"] as const)(
    "a continuation another process fired since the idle (%s): in_flight, naming it",
    async (settled) => {
      const idleSince = Date.now();
      await advance(500);
      const fired = await fireContinuation(elsewhere, { sessionId: S, owner: remoteOwner(), settled }, config);
      const { decision } = await judge.decide(S, "idle", openWork(), { idleSince: idleSince });
      expect(decision).toEqual(said("idle", "in_flight", { answeredBy: fired.id, firedAt: fired.createdAt }));
    },
  );

  it("one fired before the idle, or one that certainly failed, did not answer it", async () => {
    await fireContinuation(elsewhere, { sessionId: S, owner: remoteOwner(), settled: "sent" }, config);
    await advance(1);
    const idleSince = Date.now();
    await fireContinuation(elsewhere, { sessionId: S, owner: remoteOwner(), settled: "failed" }, config);
    expect((await judge.decide(S, "idle", openWork(), { idleSince: idleSince })).decision.verdict).toBe("continue");
  });

  it("a continuation recorded `pending` in any process is in flight at every stage, whenever it was fired", async () => {
    await fireContinuation(elsewhere, { sessionId: S, owner: remoteOwner(), firedAt: Date.now() - 60_000 });
    for (const stage of ["idle", "deadline", "before_prompt"] as const)
      expect((await judge.decide(S, stage, openWork(), { idleSince: Date.now() })).decision).toEqual(
        said(stage, "in_flight"),
      );
    expect((await judge.decide(S, "idle")).decision).toEqual(said("idle", "in_flight"));
  });
});

describe("decide: this process's own delivery queue", () => {
  it("is a continuation in flight at the idle, and not at the deadline or before the prompt (it is the one asking)", async () => {
    const finish = busyQueue();
    expect((await judge.decide(S, "idle")).decision).toEqual(said("idle", "in_flight"));
    expect((await judge.decide(S, "idle", openWork(), { idleSince: Date.now() })).decision).toEqual(
      said("idle", "in_flight"),
    );
    expect((await judge.decide(S, "deadline")).decision.verdict).toBe("continue");
    expect((await judge.decide(S, "before_prompt", openWork())).decision.verdict).toBe("continue");
    finish();
    await queue.drain();
    expect((await judge.decide(S, "idle")).decision.verdict).toBe("continue");
  });

  it("a busy queue of another session holds nothing here", async () => {
    busyQueue("ses_other");
    expect((await judge.decide(S, "idle")).decision.verdict).toBe("continue");
  });
});

describe("decide: what this process saw in events", () => {
  it.each([
    { saw: "the session busy", set: () => memories.get(S).sawStatus("busy"), expected: said("idle", "busy") },
    {
      saw: "two questions asked and not answered",
      set: () => {
        memories.get(S).sawRequest("per_1", true);
        memories.get(S).sawRequest("que_2", true);
      },
      expected: said("idle", "waiting_for_user", { source: "request", pendingRequests: 2 }),
    },
    {
      saw: "a compaction just now",
      set: () => memories.get(S).sawCompaction(),
      expected: said("idle", "compaction", { state: "finished" }),
    },
    {
      saw: "a parent of the session",
      set: () => void memories.get(S).sawParent("ses_parent"),
      expected: said("idle", "session_filtered", { parentId: "ses_parent" }),
    },
  ])("$saw holds the session", async ({ set, expected }) => {
    expect((await judge.decide(S, "idle")).decision.verdict).toBe("continue");
    set();
    expect((await judge.decide(S, "idle")).decision).toEqual(expected);
  });

  it("the todos events reported are what the deadline is judged on", async () => {
    memories.get(S).sawTodos(todos("completed", "completed"));
    expect((await judge.decide(S, "deadline")).decision).toEqual(
      said("deadline", "todos_complete", { total: 2, completed: 2 }),
    );
    // An idle's pre-check reads no todos; OpenCode's answer is what the look judges.
    expect((await judge.decide(S, "idle")).decision.verdict).toBe("continue");
    expect((await judge.decide(S, "idle", openWork(), { idleSince: Date.now() })).decision.verdict).toBe("continue");
  });
});

describe("rememberTodos", () => {
  it("keeps the list OpenCode answered and ends a run of failed reads", () => {
    const memory = memories.get(S);
    memory.failedTodoReads(2);
    const list = todos("pending");
    judge.rememberTodos(S, { todos: list });
    expect(memory.todos).toBe(list);
    expect(memory.todoReadFailures).toBe(0);
  });

  it("a read that failed changes nothing remembered", () => {
    const memory = memories.get(S);
    const list = todos("pending");
    memory.sawTodos(list);
    memory.failedTodoReads(1);
    judge.rememberTodos(S, { todos: "fetch_failed", todoError: "fetch failed" });
    expect(memory.todos).toBe(list);
    expect(memory.todoReadFailures).toBe(1);
  });
});

describe("retryTodoRead", () => {
  const failed: HostFacts = { todos: "fetch_failed", todoError: "todo read did not answer within 1000 ms" };
  /** When the idle whose look failed was seen. */
  const IDLE = Date.now() - 700;

  it("owes a look after a doubling backoff, through recheck_at, then gives up after maxRetries reads in a row", async () => {
    const plans = [];
    for (let i = 0; i < MAX_RETRIES + 1; i++) plans.push(judge.retryTodoRead(S, failed, IDLE));
    const now = Date.now();
    expect(plans).toEqual([
      {
        detail: { error: failed.todoError, attempt: 1, retryInMs: BASE_MS },
        look: { owe: now + BASE_MS, since: IDLE },
      },
      {
        detail: { error: failed.todoError, attempt: 2, retryInMs: 2 * BASE_MS },
        look: { owe: now + 2000, since: IDLE },
      },
      { detail: { error: failed.todoError, attempt: 3, final: true }, look: TAKE },
    ]);
    // Given up: the next idle's failed read starts a new run.
    expect(judge.retryTodoRead(S, failed, IDLE).detail).toMatchObject({ attempt: 1, retryInMs: BASE_MS });
  });

  it("a read that answered in between starts the run over", () => {
    judge.retryTodoRead(S, failed, IDLE);
    judge.rememberTodos(S, { todos: todos("pending") });
    expect(judge.retryTodoRead(S, failed, IDLE).detail).toMatchObject({ attempt: 1 });
  });

  it("with maxRetries 0, the first failure is final; without a reason, the detail names none", () => {
    build({ maxRetries: 0 });
    expect(judge.retryTodoRead(S, { todos: "fetch_failed" }, IDLE)).toEqual({
      detail: { attempt: 1, final: true },
      look: TAKE,
    });
  });

  it("written with its skip, the owed look is in the session's row", async () => {
    const retry = judge.retryTodoRead(S, failed, IDLE);
    await judge.recordSkip(S, skip("todo_fetch_failed"), { trigger: "idle", ...retry.detail }, retry.look);
    // The idle it judges goes with it: a retry due long after its idle still yields to a continuation since.
    expect(rows.session(S)).toMatchObject({ recheck_at: Date.now() + BASE_MS, owed_since: IDLE });
    expect(rows.audit(S)).toMatchObject([
      {
        event: "skipped",
        reason: "todo_fetch_failed",
        detail: { trigger: "idle", error: failed.todoError, attempt: 1, retryInMs: BASE_MS },
      },
    ]);
  });
});

describe("recordSkip", () => {
  it("writes the skip's audit row, its detail with what the caller adds, and the look owed", async () => {
    await judge.recordSkip(S, skip("children_running", { busyChildren: 1 }), { trigger: "idle" }, { owe: 42 });
    expect(rows.audit(S)).toMatchObject([
      {
        at: Date.now(),
        event: "skipped",
        reason: "children_running",
        detail: { busyChildren: 1, trigger: "idle" },
        directory: DIRECTORY,
      },
    ]);
    expect(rows.session(S)).toMatchObject({ recheck_at: 42, directory: DIRECTORY });
  });

  it("is one transaction: an audit row that cannot be written leaves the session as it was", async () => {
    await store.change(oweLook(SCOPE, Date.now(), { owe: 7 }));
    // A detail JSON cannot hold: the audit row fails after the session change was applied in the same transaction.
    const unwritable = { trigger: "idle", size: 1n };
    await expect(judge.recordSkip(S, skip("no_todos"), unwritable, TAKE)).rejects.toThrow();
    expect(rows.session(S)).toMatchObject({ recheck_at: 7 });
    expect(rows.audit(S)).toEqual([]);
  });

  it("a skip that ends continuation tells the user once: the toast, the log line, notified_stop", async () => {
    const budget = skip("budget_exhausted", { continuations: 20, limit: 20 });
    await judge.recordSkip(S, budget, { trigger: "idle" });
    expect(host.toasts).toEqual([
      {
        title: "Todo continuation",
        message: "Stopped: the budget of 20 is spent.\nPalette: Allow more to go on.",
        variant: "warning",
        durationMs: 8000,
      },
    ]);
    expect(rows.session(S)).toMatchObject({ notified_stop: "budget_exhausted" });
    await judge.recordSkip(S, budget, { trigger: "idle" });
    expect(host.toasts).toHaveLength(1);
    expect(rows.trail(S)).toEqual(["skipped:budget_exhausted", "skipped:budget_exhausted"]);
  });

  it("the notice is worded from the skip's detail with what the caller added", async () => {
    await judge.recordSkip(S, skip("stagnation", { limit: 3 }), { unproductiveContinuations: 3 });
    expect(host.toasts.map((t) => t.message)).toEqual([
      "Stopped: 3 times without progress.\n/resume-continuation to go on.",
    ]);
  });

  // Continuation has ended until someone acts for these (README "How it decides"): the user is told.
  it.each([
    "stopped",
    "token_limit",
    "provider_error",
    "errors_persist",
    "user_took_over",
    "no_progress_reply",
    "stagnation",
    "budget_exhausted",
  ] as const)("%s owes a stop notice", async (reason) => {
    await judge.recordSkip(S, skip(reason), { trigger: "idle" });
    expect(host.toasts).toHaveLength(1);
    expect(rows.session(S)).toMatchObject({ notified_stop: reason });
  });

  // A question is told (remembered, so its notice goes once) but shows no toast: the session waits, it did not stop.
  it("waiting_for_user is remembered for its notice, without a toast", async () => {
    await judge.recordSkip(S, skip("waiting_for_user"), { trigger: "idle" });
    expect(host.toasts).toEqual([]);
    expect(rows.session(S)).toMatchObject({ notified_stop: "waiting_for_user" });
  });

  // Waiting states end by themselves, and done is done (after no continuation: nothing to tell): nobody is told.
  it.each([
    "todos_complete",
    "no_todos",
    "busy",
    "in_flight",
    "children_running",
    "todo_fetch_failed",
    "compaction",
    "recovering",
    "user_key",
    "session_filtered",
  ] as const)("%s owes none", async (reason) => {
    await judge.recordSkip(S, skip(reason), { trigger: "idle" });
    expect(host.toasts).toEqual([]);
    expect(rows.session(S)?.notified_stop ?? null).toBeNull();
    expect(rows.trail(S)).toEqual([`skipped:${reason}`]);
  });
});
