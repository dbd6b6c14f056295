// prepareContinuation builds one continuation once the guards let it go. It promises: the injection row carries a new
// injection id and the OpenCode message id chosen for it in advance, the countdown it fires and that countdown's
// attempt, the counts of the todos just read, the agent, model and variant of the latest real message (of the session's
// row when the messages say nothing), this process as owner, a lease long enough for the prompt call and the look-up
// after it, and the session patch to apply once it is out (the streaks the judge counted, the progress ledger merged
// with these todos, the backoff and the told stop cleared); the claim records that row `pending`; the prompt request
// is sent with our message id and the same agent and model, its text carries the injection id, and with quietTranscript
// the transcript shows one line; the audit detail says which countdown, with what, how late, resumed or not. Built on
// the engine's context, a real countdown and OpenCode's answers through the rig (test/support/delivery-rig.ts).
import { describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/resolve.js";
import { findInjectionId, PROMPT_HEADER } from "../../../src/core/prompt.js";
import { prepareContinuation, type ContinuationInput } from "../../../src/engine/deliver/continuation.js";
import { changeSession } from "../../../src/store/changes/change-session.js";
import type { SessionPatch } from "../../../src/core/transitions.js";
import { q } from "../../../src/store/script.js";
import { build, rig, rows, S, store, useDeliveryRig } from "../../support/delivery-rig.js";
import { DIRECTORY } from "../../support/engine-fixture.js";

useDeliveryRig();

/** OpenCode's own message id format: `msg_`, 12 hex digits of time and counter, 14 base62 characters. */
const OPENCODE_MESSAGE_ID = /^msg_[0-9a-f]{12}[0-9A-Za-z]{14}$/;
const STREAKS = { stagnantStreak: 1, workStreak: 3, unproductiveStreak: 2 };
const INFO = { lateMs: 1234, resumed: "lease_expired" as const };
const CHECKED = { queuedMs: 420, checkMs: 87 };

/**
 * What the injector hands over right before the prompt: a countdown of S armed here (attempt 2), OpenCode's answers
 * read now, and the session's row with `patch` applied (none when `patch` is undefined).
 */
async function inputFor(
  patch: SessionPatch | undefined,
  extra: Partial<ContinuationInput> = {},
): Promise<ContinuationInput> {
  if (patch) await store.change(changeSession({ sessionId: S, directory: DIRECTORY }, Date.now(), patch));
  const armed = await rig.countdowns.arm({ sessionId: S, attempt: 2, delayMs: 60_000, detail: {} });
  const facts = await rig.facts.gather(S);
  const row = await store.read(q.session(S));
  return { armed: armed!, info: INFO, checked: CHECKED, facts, row, decision: STREAKS, turnSignals: 7, ...extra };
}

function rigWithTodos(overrides: Partial<Config> = {}) {
  build(overrides);
  rig.host.setTodos(S, [
    ["write the parser", "completed"],
    ["test the parser", "in_progress"],
    ["document it", "pending"],
  ]);
}

describe("the injection row", () => {
  it("a new injection id, our message id, the countdown it fires, the todos read, the attempt, this process: the claim records it pending", async () => {
    rigWithTodos();
    const input = await inputFor(undefined);
    const { injection, request } = prepareContinuation(rig.ctx, input);
    expect(injection).toMatchObject({
      sessionId: S,
      directory: DIRECTORY,
      server: null,
      countdownId: input.armed.row.id,
      createdAt: Date.now(),
      todosTotal: 3,
      todosOpen: 2,
      attempt: 2,
      owner: rig.ctx.owner,
    });
    expect(injection.id).toMatch(/^inj_[A-Za-z0-9_-]{6,64}$/);
    expect(injection.messageId).toMatch(OPENCODE_MESSAGE_ID);
    expect(request.messageId).toBe(injection.messageId);

    const another = prepareContinuation(rig.ctx, input);
    expect(another.injection.id).not.toBe(injection.id);
    expect(another.injection.messageId).not.toBe(injection.messageId);

    expect(await rig.countdowns.claim(input.armed, injection, {})).toBe(true);
    expect(rows.injections(S)).toMatchObject([
      {
        id: injection.id,
        status: "pending",
        message_id: injection.messageId,
        countdown_id: input.armed.row.id,
        todos_total: 3,
        todos_open: 2,
        attempt: 2,
        owner: rig.ctx.owner,
        lease_until: injection.leaseUntil,
      },
    ]);
  });

  it("holds its lease long enough for the prompt call, the look-up after it, and one lease more", async () => {
    rigWithTodos({ promptTimeoutMs: 30_000, hostTimeoutMs: 7_000, leaseMs: 15_000 });
    const { injection } = prepareContinuation(rig.ctx, await inputFor(undefined));
    expect(injection.leaseUntil - Date.now()).toBe(30_000 + 7_000 + 15_000);
  });

  it("carries the agent, model and variant of the latest real message, over what the row last recorded", async () => {
    rigWithTodos();
    rig.host.addUserMessage(S, "now the docs", {
      agent: "docs",
      providerId: "anthropic",
      modelId: "claude-x",
      variant: "high",
    });
    rig.host.addAssistantMessage(S);
    const input = await inputFor({ agent: "build", modelProvider: "old", modelId: "model-0", variant: "low" });
    const { injection, request, detail } = prepareContinuation(rig.ctx, input);
    expect(injection).toMatchObject({ agent: "docs", model: "anthropic/claude-x", variant: "high" });
    expect(request).toMatchObject({
      agent: "docs",
      model: { providerId: "anthropic", modelId: "claude-x" },
      variant: "high",
    });
    expect(detail).toMatchObject({ agent: "docs", model: "anthropic/claude-x" });
  });

  it("carries those of the session's row when OpenCode's messages cannot be read", async () => {
    rigWithTodos();
    rig.host.messagesBehaviour = "fail";
    const input = await inputFor({ agent: "reader", modelProvider: "openai", modelId: "gpt-y", variant: "fast" });
    expect(input.facts.messages).toBeUndefined();
    const { injection, request, detail } = prepareContinuation(rig.ctx, input);
    expect(injection).toMatchObject({ agent: "reader", model: "openai/gpt-y", variant: "fast" });
    expect(request).toMatchObject({ agent: "reader", model: { providerId: "openai", modelId: "gpt-y" } });
    expect(detail).toMatchObject({ agent: "reader", model: "openai/gpt-y" });
  });

  it("names no model when only half of one is known, and no agent when none is", async () => {
    rigWithTodos();
    rig.host.messagesBehaviour = "fail";
    const input = await inputFor({ modelProvider: "openai" });
    const { injection, request, detail } = prepareContinuation(rig.ctx, input);
    expect(injection).toMatchObject({ agent: null, model: null, variant: null });
    expect(request.model).toBeUndefined();
    expect(request.agent).toBeUndefined();
    expect(detail).toMatchObject({ agent: null, model: null });
  });

  it("sets, once it is out, the streaks the judge counted and the ledger merged with these todos, and clears the backoff, the told stop and the wake's note", async () => {
    rigWithTodos();
    // What earlier continuations saw: "write the parser" was once in progress, a todo since removed was closed.
    const ledger = { closedHigh: 2, ranks: { "write the parser": 1, "old todo": 2, "document it": 1 } };
    const input = await inputFor({
      todoSnapshot: JSON.stringify(ledger),
      backoffUntil: 99,
      notifiedStop: "gave_up",
      wakeNote: '{"kind":"limit"}',
    });
    const { injection } = prepareContinuation(rig.ctx, input);
    const onSent = JSON.parse(injection.onSent!) as SessionPatch;
    expect(onSent).toEqual({
      stagnantContinuations: 1,
      workContinuations: 3,
      unproductiveReplies: 2,
      todoSnapshot: expect.any(String),
      fileLedger: null,
      backoffUntil: null,
      notifiedStop: null,
      wakeNote: null,
    });
    // Ranks only go up, known todos stay known, the closed count keeps its high.
    expect(JSON.parse(onSent.todoSnapshot!)).toEqual({
      closedHigh: 2,
      ranks: { "write the parser": 2, "test the parser": 1, "document it": 1, "old todo": 2 },
    });
  });

  it("says, right after the header, why the session was woken from its park; nothing without a note", async () => {
    rigWithTodos();
    const woken = await inputFor({ wakeNote: JSON.stringify({ kind: "time", reason: "CI is running" }) });
    const text = prepareContinuation(rig.ctx, woken).request.text;
    expect(text.split("\n\n").slice(0, 2)).toEqual([
      PROMPT_HEADER,
      'Woken: the time you asked to wait for has come (you were waiting for: "CI is running").',
    ]);
    const plain = prepareContinuation(rig.ctx, await inputFor({ wakeNote: null })).request.text;
    expect(plain).not.toContain("Woken");
    const unreadable = prepareContinuation(rig.ctx, await inputFor({ wakeNote: "{not json" })).request.text;
    expect(unreadable).not.toContain("Woken");
  });

  it("adds the files the turn touched to the session's file ledger, the next turn's baseline", async () => {
    rigWithTodos();
    const earlier = { files: { "/p/a.ts": ["h1"], "/p/b.ts": ["h2"] } };
    const input = await inputFor({ fileLedger: JSON.stringify(earlier) });
    const turnFiles = {
      answers: "own" as const,
      files: [
        { path: "/p/a.ts", after: "h3" },
        { path: "/p/c.ts", before: null, after: "h4" },
      ],
    };
    const facts = { ...input.facts, messages: { ...input.facts.messages!, turnFiles } };
    const { injection } = prepareContinuation(rig.ctx, { ...input, facts });
    const onSent = JSON.parse(injection.onSent!) as SessionPatch;
    // Most recently touched last: b.ts was not touched, so it is the first to go once the ledger is full.
    expect(JSON.parse(onSent.fileLedger!)).toEqual({
      files: { "/p/b.ts": ["h2"], "/p/a.ts": ["h1", "h3"], "/p/c.ts": [null, "h4"] },
    });
    expect(Object.keys(JSON.parse(onSent.fileLedger!).files)).toEqual(["/p/b.ts", "/p/a.ts", "/p/c.ts"]);
  });

  it("starts the ledger from these todos for a session with no row yet", async () => {
    rigWithTodos();
    const input = await inputFor(undefined);
    expect(input.row).toBeUndefined();
    const { injection } = prepareContinuation(rig.ctx, input);
    const onSent = JSON.parse(injection.onSent!) as SessionPatch;
    expect(JSON.parse(onSent.todoSnapshot!)).toEqual({
      closedHigh: 1,
      ranks: { "write the parser": 2, "test the parser": 1, "document it": 0 },
    });
  });
});

describe("the prompt request", () => {
  it.each([
    { quietTranscript: true, display: '↻ todo-continuation: 1/3 done, continuing with "test the parser"' },
    { quietTranscript: false, display: undefined },
  ])(
    "goes to the session with our message id and a text that carries the injection id (quietTranscript $quietTranscript)",
    async ({ quietTranscript, display }) => {
      rigWithTodos({ quietTranscript });
      const { injection, request } = prepareContinuation(rig.ctx, await inputFor(undefined));
      expect(request.sessionId).toBe(S);
      expect(request.messageId).toBe(injection.messageId);
      expect(findInjectionId(request.text)).toBe(injection.id);
      expect(request.text).toContain('"test the parser"');
      expect(request.display).toBe(display);
    },
  );

  it("is written from the configured template", async () => {
    rigWithTodos({ prompt: "Keep going with {{next}} ({{remaining}} left)." });
    const { injection, request } = prepareContinuation(rig.ctx, await inputFor(undefined));
    expect(request.text.startsWith(`${PROMPT_HEADER}\n\nKeep going with "test the parser" (2 left).`)).toBe(true);
    expect(findInjectionId(request.text)).toBe(injection.id);
  });
});

describe("what its audit rows say, and what the injector keeps", () => {
  it("the countdown, agent, model, todos, attempt, how late, whether resumed, how long it queued and was checked; the summary and the turn signals at the call", async () => {
    rigWithTodos();
    const input = await inputFor(undefined);
    const continuation = prepareContinuation(rig.ctx, input);
    expect(continuation.detail).toEqual({
      countdownId: input.armed.row.id,
      agent: "build",
      model: "scripted/model-1",
      todosOpen: 2,
      todosTotal: 3,
      attempt: 2,
      lateMs: 1234,
      resumed: "lease_expired",
      queuedMs: 420,
      checkMs: 87,
    });
    expect(continuation.summary).toEqual({ total: 3, completed: 1, open: 2 });
    expect(continuation.signalsAtCall).toBe(7);
  });

  it("what the turn before counted as, and the work count against its limit", async () => {
    rigWithTodos({ workWithoutProgressLimit: 5 });
    const progress = { counted: "files" as const, filesChanged: 2, filesChurned: 1 };
    const continuation = prepareContinuation(
      rig.ctx,
      await inputFor(undefined, { decision: { ...STREAKS, progress } }),
    );
    expect(continuation.detail).toMatchObject({ progress, work: { continuations: 3, limit: 5 } });
  });
});
