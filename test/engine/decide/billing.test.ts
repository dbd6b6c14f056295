// Billing promises: each continuation's turn is billed once, from the messages a look read — at the look after the
// turn, or, for a turn whose last message is still open, only right before the next prompt — with what it bought
// (todos closed since it went out), and its spend counts in the session's window; the budgets then stop it.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/resolve.js";
import { billTurn } from "../../../src/core/bill.js";
import type { HostFacts } from "../../../src/core/decision-input.js";
import type { SessionMessage } from "../../../src/core/messages.js";
import { idLine } from "../../../src/core/prompt.js";
import { Billing } from "../../../src/engine/decide/billing.js";
import { FactGatherer } from "../../../src/engine/read/facts.js";
import { OwnMessageIds } from "../../../src/engine/memory/own-messages.js";
import { Judge } from "../../../src/engine/decide/judge.js";
import { StopNotices } from "../../../src/engine/decide/stop-notices.js";
import { DeliveryQueue } from "../../../src/engine/wait/queue.js";
import { SessionMemories } from "../../../src/engine/memory/session-memory.js";
import { changeSession } from "../../../src/store/changes/change-session.js";
import type { NewInjection } from "../../../src/store/port.js";
import { q } from "../../../src/store/script.js";
import { fireContinuation } from "../../support/continuations.js";
import {
  files,
  folder,
  liveOwner,
  makeContext,
  store,
  type TestContext,
  useTestFiles,
} from "../../support/engine-context.js";
import { DIRECTORY, testConfig } from "../../support/engine-fixture.js";
import { FakeHost } from "../../support/fake-host.js";

const S = "ses_bill";
let ctx: TestContext;
let billing: Billing;
let judge: Judge;
let host: FakeHost;
let gatherer: FactGatherer;

function build(overrides: Partial<Config> = {}) {
  const config = testConfig(`${folder}/state.db`, overrides);
  host = new FakeHost();
  ctx = makeContext({ store, config, owner: liveOwner(), host });
  const queue = new DeliveryQueue(config.maxConcurrentInjections, (error) => ctx.failed("continuation", error));
  gatherer = new FactGatherer(host, config.hostTimeoutMs, () => ctx.clock.monotonic(), new OwnMessageIds(store));
  billing = new Billing(ctx, gatherer);
  judge = new Judge(ctx, new SessionMemories(100, () => false), queue, new StopNotices(ctx), billing);
}

useTestFiles();
beforeEach(() => {
  build();
});
afterEach(() => {
  ctx.timers.stop();
});

const usage = (cost: number, input: number, output: number) => ({
  cost,
  tokens: { input, output, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
});
function turn(injection: NewInjection, o: { cost: number; open?: boolean; answers?: number }): SessionMessage[] {
  const answers = Array.from({ length: o.answers ?? 1 }, (_, i) => ({
    id: `msg_reply_${injection.id}_${i}`,
    role: "assistant",
    parentId: injection.messageId!,
    createdAt: Date.now(),
    ...(o.open ? {} : { completedAt: Date.now() + 100 }),
    providerId: "scripted",
    modelId: "model-1",
    usage: usage(o.cost, 1000, 100),
    parts: [
      { type: "tool", tool: "write" },
      { type: "step-finish", usage: usage(o.cost, 1000, 100) },
    ],
  }));
  return [{ id: injection.messageId!, role: "user", parts: [] }, ...answers];
}
const facts = (injection: NewInjection, messages: SessionMessage[], todos: HostFacts["todos"] = []): HostFacts => ({
  todos,
  lastTurn: {
    injectionId: injection.id,
    messageId: injection.messageId!,
    bill: billTurn(messages, injection.messageId!),
  },
});
const bills = () => store.reader.all<Record<string, unknown>>("SELECT * FROM continuation_bills ORDER BY continued_at");

describe("billing a continuation's turn", () => {
  it("is written once, at the look after the turn, with its tokens, cost, model and what it bought", async () => {
    const injection = await fireContinuation(store, { sessionId: S, owner: ctx.owner, settled: "sent" }, ctx.config);
    await store.change(
      changeSession({ sessionId: S, directory: DIRECTORY }, Date.now(), {
        todoSnapshot: JSON.stringify({ closedHigh: 0, ranks: { a: 1, b: 0 } }),
      }),
    );
    const messages = turn(injection, { cost: 0.02, answers: 2 });
    const todos = [
      { content: "a", status: "completed" },
      { content: "b", status: "pending" },
    ];
    await billing.record(S, facts(injection, messages, todos), "idle");
    await billing.record(S, facts(injection, messages, todos), "before_prompt");
    expect(await bills()).toMatchObject([
      {
        injection_id: injection.id,
        session_id: S,
        message_id: injection.messageId,
        continued_at: injection.createdAt,
        outcome: "completed",
        model_id: "model-1",
        messages: 2,
        steps: 2,
        tool_calls: 2,
        input_tokens: 2000,
        output_tokens: 200,
        tokens: 2200,
        cost: 0.04,
        todos_closed: null,
        progressed: null,
      },
    ]);
    const row = (await store.read(q.session(S)))!;
    expect([row.continuationCost, row.continuationTokens]).toEqual([0.04, 2200]);
  });

  it("says which files the turn made new (against the session's file ledger) and of what whole spend it is a share", async () => {
    const injection = await fireContinuation(store, { sessionId: S, owner: ctx.owner, settled: "sent" }, ctx.config);
    await store.change(
      changeSession({ sessionId: S, directory: DIRECTORY }, Date.now(), {
        fileLedger: JSON.stringify({ files: { "/p/undone.ts": ["h0", "h1"] } }),
      }),
    );
    const messages = turn(injection, { cost: 0.02 });
    const seen: HostFacts = {
      ...facts(injection, messages),
      messages: {
        unfinishedQuestion: false,
        ownInjectionIds: [injection.id],
        ownMessageIds: [injection.messageId!],
        replyToLastInjection: "worked",
        turnFiles: {
          answers: "own",
          files: [
            { path: "/p/new.ts", after: "n1" },
            { path: "/p/undone.ts", after: "h0" },
          ],
        },
      },
      sessionSpend: usage(1.5, 40_000, 2_000),
    };
    await billing.record(S, seen, "idle");
    expect(await bills()).toMatchObject([{ files_changed: 1, session_cost: 1.5, session_tokens: 42_000 }]);
  });

  it("leaves the files unknown when a person's message came after the continuation's turn", async () => {
    const injection = await fireContinuation(store, { sessionId: S, owner: ctx.owner, settled: "sent" }, ctx.config);
    const messages = turn(injection, { cost: 0.02 });
    const seen: HostFacts = {
      ...facts(injection, messages),
      messages: {
        unfinishedQuestion: false,
        ownInjectionIds: [injection.id],
        ownMessageIds: [injection.messageId!],
        turnFiles: { answers: "other", files: [{ path: "/p/theirs.ts", after: "t1" }] },
      },
    };
    await billing.record(S, seen, "idle");
    expect(await bills()).toMatchObject([{ files_changed: null, session_cost: null, session_tokens: null }]);
  });

  it("a turn still open at its first idle waits for the look right before the next prompt", async () => {
    const injection = await fireContinuation(store, { sessionId: S, owner: ctx.owner, settled: "sent" }, ctx.config);
    const open = turn(injection, { cost: 0.5, open: true });
    await billing.record(S, facts(injection, open), "idle");
    expect(await bills()).toEqual([]);
    await billing.record(S, facts(injection, open), "before_prompt");
    expect(await bills()).toMatchObject([{ outcome: "interrupted", cost: 0.5 }]);
  });

  it("another process's bill of the same turn stands: this one writes nothing more", async () => {
    const injection = await fireContinuation(store, { sessionId: S, owner: ctx.owner, settled: "sent" }, ctx.config);
    const messages = turn(injection, { cost: 0.1 });
    const { store: elsewhere } = await files.open();
    await new Billing({ ...ctx, store: elsewhere } as TestContext, gatherer).record(
      S,
      facts(injection, messages),
      "idle",
    );
    await billing.record(S, facts(injection, messages), "idle");
    expect(await bills()).toHaveLength(1);
    expect((await store.read(q.session(S)))!.continuationCost).toBe(0.1);
  });
});

describe("after a restart", () => {
  /** The continuation's message as OpenCode keeps it, and the turn that answered it. */
  function transcript(sessionId: string, injection: NewInjection, o: { cost: number; open?: boolean }): void {
    host.addUserMessage(sessionId, `continue\n${idLine(injection.id)}`, { id: injection.messageId! });
    for (const message of turn(injection, o).slice(1)) host.messageList(sessionId).push(message);
  }

  it("a turn that ended while no enforcer was there is billed from the session's messages, once", async () => {
    const injection = await fireContinuation(store, { sessionId: S, owner: ctx.owner, settled: "sent" }, ctx.config);
    transcript(S, injection, { cost: 0.3 });
    expect(await billing.recover()).toBe(1);
    expect(await bills()).toMatchObject([{ injection_id: injection.id, outcome: "completed", cost: 0.3, steps: 1 }]);
    // The next start finds nothing left to bill.
    build();
    expect(await billing.recover()).toBe(0);
    expect(await bills()).toHaveLength(1);
    expect((await store.read(q.session(S)))!.continuationCost).toBe(0.3);
  });

  it("a turn a crash cut short is billed as interrupted; a session busy now is left to the look at its idle", async () => {
    const cut = await fireContinuation(store, { sessionId: S, owner: ctx.owner, settled: "sent" }, ctx.config);
    transcript(S, cut, { cost: 0.05, open: true });
    const running = await fireContinuation(
      store,
      { sessionId: "ses_busy", owner: ctx.owner, settled: "sent" },
      ctx.config,
    );
    transcript("ses_busy", running, { cost: 0.05, open: true });
    host.statuses = { ses_busy: "busy" };
    expect(await billing.recover()).toBe(1);
    expect(await bills()).toMatchObject([{ injection_id: cut.id, outcome: "interrupted", cost: 0.05 }]);
  });

  it("a continuation whose message is not among those a look reads stays unbilled rather than billed as unanswered", async () => {
    const injection = await fireContinuation(store, { sessionId: S, owner: ctx.owner, settled: "sent" }, ctx.config);
    host.addUserMessage(S, "something else");
    expect(await billing.recover()).toBe(0);
    expect(await bills()).toEqual([]);
    expect(injection.messageId).toBeDefined();
  });
});

describe("the budgets, with the bills", () => {
  it("a session's cost budget stops the next continuation once its turns spent it", async () => {
    build({ maxContinuationCost: 0.25 });
    const first = await fireContinuation(store, { sessionId: S, owner: ctx.owner, settled: "sent" }, ctx.config);
    const open = [{ content: "x", status: "in_progress" }];
    const afterFirst = facts(first, turn(first, { cost: 0.1 }), open);
    expect((await judge.decide(S, "idle", afterFirst)).decision.verdict).toBe("continue");
    const second = await fireContinuation(store, { sessionId: S, owner: ctx.owner, settled: "sent" }, ctx.config);
    // 0.2 spent; the median of the two (0.1) would take it to 0.3, past 0.25: not started.
    const { decision } = await judge.decide(S, "before_prompt", facts(second, turn(second, { cost: 0.1 }), open));
    expect(decision).toMatchObject({
      verdict: "skip",
      reason: "cost_budget",
      detail: { budget: "session_cost", limit: 0.25, estimate: 0.1, window: "since_user_message" },
    });
    expect((decision as unknown as { detail: { spent: number } }).detail.spent).toBeCloseTo(0.2);
  });

  it("the daily cap counts every session of the database, whichever engine billed it", async () => {
    build({ dailyContinuationCost: 1 });
    // Another engine (another OpenCode process) on the same file bills its own session.
    const { store: elsewhere } = await files.open();
    const other = await fireContinuation(
      elsewhere,
      { sessionId: "ses_other", owner: "otherhost/2/other", settled: "sent" },
      ctx.config,
    );
    const otherEngine = new Billing({ ...ctx, store: elsewhere } as TestContext, gatherer);
    await otherEngine.record("ses_other", facts(other, turn(other, { cost: 1.2 })), "idle");
    const mine = await fireContinuation(store, { sessionId: S, owner: ctx.owner, settled: "sent" }, ctx.config);
    const { decision } = await judge.decide(
      S,
      "idle",
      facts(mine, turn(mine, { cost: 0.01 }), [{ content: "x", status: "pending" }]),
    );
    expect(decision).toMatchObject({
      verdict: "skip",
      reason: "cost_budget",
      detail: { budget: "daily_cost", limit: 1 },
    });
  });

  it("a session's first continuation is held by the daily cap when today's latest ones say it would overrun", async () => {
    build({ dailyContinuationCost: 0.003 });
    const { store: elsewhere } = await files.open();
    const otherEngine = new Billing({ ...ctx, store: elsewhere } as TestContext, gatherer);
    for (let i = 0; i < 2; i++) {
      const other = await fireContinuation(
        elsewhere,
        { sessionId: "ses_other", owner: "otherhost/2/other", settled: "sent" },
        ctx.config,
      );
      await otherEngine.record("ses_other", facts(other, turn(other, { cost: 0.0012 })), "idle");
    }
    // S has no continuation, so no bill of its own: the day's 0.0024 and its latest ones' 0.0012 hold it.
    const { decision } = await judge.decide(S, "idle", { todos: [{ content: "x", status: "pending" }] });
    expect(decision).toMatchObject({
      verdict: "skip",
      reason: "cost_budget",
      detail: { budget: "daily_cost", limit: 0.003, window: "today", estimate: 0.0012 },
    });
    expect((decision as unknown as { detail: { spent: number } }).detail.spent).toBeCloseTo(0.0024, 9);
  });
});
