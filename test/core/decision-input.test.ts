// What the guard chain is given is put together the same way at the idle, the deadline and right before the prompt:
// the durable row (with safe defaults when there is none), what events showed (unless OpenCode says the session is
// working), and OpenCode's answers. The agent a continuation goes out with is that of the latest real message, else
// the one recorded; arming writes it down with the pause and the errors that ended.
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/resolve.js";
import type { Decision, Stage } from "../../src/core/decision.js";
import {
  agentChoice,
  armPatch,
  decisionInput,
  type DecisionContext,
  type HostFacts,
  type SessionSightings,
  type SessionState,
} from "../../src/core/decision-input.js";
import type { SessionStatus } from "../../src/core/events.js";
import type { MessageFacts } from "../../src/core/messages.js";
import { ledgerOf, serializeLedger, type Todo } from "../../src/core/todos.js";

const NOW = 1_700_000_000_000;
const config = resolveConfig({}, {});
const todos: Todo[] = [
  { content: "a", status: "completed" },
  { content: "b", status: "pending" },
];
const seenTodos: Todo[] = [{ content: "seen", status: "pending" }];

function row(overrides: Partial<SessionState> = {}): SessionState {
  return {
    parentId: null,
    stoppedAt: null,
    stopSource: null,
    recoveringSince: null,
    lastErrorAt: null,
    lastErrorKind: null,
    lastErrorName: null,
    errorStreak: 0,
    lastErrorRetryAfterMs: null,
    abortedAt: null,
    tokenLimitAt: null,
    continuations: 0,
    stagnantContinuations: 0,
    workContinuations: 0,
    fileLedger: null,
    continuationCost: 0,
    continuationTokens: 0,
    allowedContinuations: 0,
    allowedCost: 0,
    allowedTokens: 0,
    unproductiveReplies: 0,
    todoSnapshot: null,
    backoffUntil: null,
    consecutiveFailures: 0,
    pausedAt: null,
    resumedAt: null,
    pauseMessageId: null,
    pauseBaseline: null,
    agent: null,
    modelProvider: null,
    modelId: null,
    variant: null,
    ...overrides,
  };
}

const seen = (overrides: Partial<SessionSightings> = {}): SessionSightings => ({
  pendingRequests: 0,
  compactedRecently: false,
  ...overrides,
});

const messages = (overrides: Partial<MessageFacts> = {}): MessageFacts => ({
  unfinishedQuestion: false,
  ownInjectionIds: [],
  ownMessageIds: [],
  ...overrides,
});

const facts = (overrides: Partial<HostFacts> = {}): HostFacts => ({ todos, ...overrides });

const context = (overrides: Partial<DecisionContext> = {}): DecisionContext => ({
  stage: "before_prompt",
  now: NOW,
  config,
  seen: seen(),
  inFlight: false,
  ...overrides,
});

describe("decisionInput", () => {
  it("passes the stage, the time and the configuration through, and the sightings into the live facts", () => {
    const input = decisionInput(
      context({
        stage: "idle",
        seen: seen({ pendingRequests: 2, compactedRecently: true }),
        inFlight: true,
      }),
    );
    expect(input.stage).toBe("idle");
    expect(input.now).toBe(NOW);
    expect(input.config).toBe(config);
    expect(input.live).toMatchObject({ inFlight: true, pendingRequests: 2, compactedRecently: true });
  });

  describe("the session's status", () => {
    // OpenCode saying busy or retry beats memory (another process may have set the session going); otherwise what
    // events showed wins, and OpenCode's answer fills in only when events said nothing.
    it.each<{ seen?: SessionStatus; host?: SessionStatus; expected?: SessionStatus }>([
      { seen: "idle", host: "busy", expected: "busy" },
      { seen: "idle", host: "retry", expected: "retry" },
      { seen: "retry", host: "busy", expected: "busy" },
      { seen: "busy", host: "idle", expected: "busy" },
      { seen: "retry", host: "idle", expected: "retry" },
      { seen: "idle", host: "idle", expected: "idle" },
      { seen: undefined, host: "idle", expected: "idle" },
      { seen: "busy", host: undefined, expected: "busy" },
      { seen: undefined, host: undefined, expected: undefined },
    ])("seen $seen, OpenCode $host → $expected", ({ seen: status, host, expected }) => {
      const input = decisionInput(context({ seen: seen({ status }), facts: facts({ status: host }) }));
      expect(input.live.status).toBe(expected);
    });

    it("without OpenCode's answers, memory alone", () => {
      expect(decisionInput(context({ seen: seen({ status: "busy" }) })).live.status).toBe("busy");
    });

    // Memory cannot stand in for OpenCode's answer when another process's continuation set the session going.
    it("says when OpenCode was asked and its status could not be read", () => {
      const unread = decisionInput(context({ seen: seen({ status: "idle" }), facts: facts() })).live;
      expect(unread).toMatchObject({ status: "idle", statusUnread: true });
      expect(decisionInput(context({ facts: facts({ status: "idle" }) })).live.statusUnread).toBeUndefined();
      expect(decisionInput(context({ seen: seen({ status: "idle" }) })).live.statusUnread).toBeUndefined();
    });
  });

  describe("the todos judged", () => {
    // The idle's pre-check judges none (it passes the todo guards); the deadline those events reported; once
    // OpenCode was asked, its answer, whatever memory holds.
    it.each<{ stage: Stage; withFacts: boolean; expected: "none" | "seen" | "host" }>([
      { stage: "idle", withFacts: false, expected: "none" },
      { stage: "deadline", withFacts: false, expected: "seen" },
      { stage: "before_prompt", withFacts: false, expected: "none" },
      { stage: "idle", withFacts: true, expected: "host" },
      { stage: "deadline", withFacts: true, expected: "host" },
      { stage: "before_prompt", withFacts: true, expected: "host" },
    ])("stage $stage, OpenCode asked: $withFacts → $expected", ({ stage, withFacts, expected }) => {
      const input = decisionInput(
        context({ stage, seen: seen({ todos: seenTodos }), facts: withFacts ? facts() : undefined }),
      );
      expect(input.todos).toBe({ none: undefined, seen: seenTodos, host: todos }[expected]);
    });

    it("right before the prompt, a list closed during the wait is judged over OpenCode's answer", () => {
      const closed: Todo[] = [{ content: "seen", status: "completed" }];
      const judged = (read: HostFacts["todos"]) =>
        decisionInput(context({ stage: "before_prompt", seen: seen({ todos: closed }), facts: facts({ todos: read }) }))
          .todos;
      expect(judged(todos)).toBe(closed);
      expect(judged("fetch_failed")).toBe("fetch_failed");
      // At the look the read alone counts: the list in memory is the one the last look read.
      expect(decisionInput(context({ stage: "idle", seen: seen({ todos: closed }), facts: facts() })).todos).toBe(
        todos,
      );
    });

    it("a failed read is passed on as such, not replaced by the todos events reported", () => {
      const input = decisionInput(
        context({ stage: "deadline", seen: seen({ todos: seenTodos }), facts: facts({ todos: "fetch_failed" }) }),
      );
      expect(input.todos).toBe("fetch_failed");
    });
  });

  it("busy descendants: their count and ids from OpenCode, unknown without its answer", () => {
    const withKids = decisionInput(context({ facts: facts({ busyDescendants: ["ses_k1", "ses_k2"] }) }));
    expect(withKids.live).toMatchObject({ busyChildren: 2, busyDescendantIds: ["ses_k1", "ses_k2"] });
    const none = decisionInput(context({ facts: facts({ busyDescendants: [] }) }));
    expect(none.live).toMatchObject({ busyChildren: 0, busyDescendantIds: [] });
    const unknown = decisionInput(context());
    expect(unknown.live.busyChildren).toBeUndefined();
    expect(unknown.live.busyDescendantIds).toBeUndefined();
  });

  it("the message facts come from OpenCode's answer", () => {
    const read = messages({ unfinishedQuestion: true });
    expect(decisionInput(context({ facts: facts({ messages: read }) })).live.messages).toBe(read);
    expect(decisionInput(context()).live.messages).toBeUndefined();
  });

  describe("whether the agent may write", () => {
    const agents = [{ name: "build", canWrite: true }, { name: "reader", canWrite: false }, { name: "vague" }];
    it.each<{ name: string; latest?: MessageFacts["latestReal"]; recorded?: string; expected: boolean | undefined }>([
      { name: "a writing agent", latest: { messageId: "m", agent: "build" }, expected: true },
      { name: "a read-only agent", latest: { messageId: "m", agent: "reader" }, expected: false },
      { name: "an agent that does not say", latest: { messageId: "m", agent: "vague" }, expected: undefined },
      { name: "an agent OpenCode does not list", latest: { messageId: "m", agent: "gone" }, expected: undefined },
      // A message that denied writing says so even when the agent itself may write.
      {
        name: "a message that denied writing",
        latest: { messageId: "m", agent: "build", writeDenied: true },
        expected: false,
      },
      { name: "the recorded agent when no message says", recorded: "reader", expected: false },
      { name: "no agent at all", expected: undefined },
    ])("$name → $expected", ({ latest, recorded, expected }) => {
      const input = decisionInput(
        context({
          row: row({ agent: recorded ?? null }),
          facts: facts({ agents, messages: messages({ latestReal: latest }) }),
        }),
      );
      expect(input.live.agentCanWrite).toBe(expected);
      expect(input.live.agent).toBe(latest?.agent ?? recorded);
    });

    it("unknown when OpenCode did not list its agents", () => {
      const input = decisionInput(
        context({ facts: facts({ messages: messages({ latestReal: { messageId: "m", agent: "reader" } }) }) }),
      );
      expect(input.live.agentCanWrite).toBeUndefined();
    });
  });

  describe("the durable facts", () => {
    it("without a row: nothing stops, nothing was counted", () => {
      expect(decisionInput(context()).durable).toStrictEqual({
        parentId: null,
        stoppedAt: null,
        stopSource: null,
        userCancelledAt: null,
        answeredBy: null,
        parked: null,
        verification: null,
        recovering: false,
        lastErrorAt: null,
        lastErrorKind: null,
        lastErrorName: null,
        errorStreak: 0,
        lastErrorRetryAfterMs: null,
        abortedAt: null,
        tokenLimitAt: null,
        continuations: 0,
        stagnantContinuations: 0,
        workContinuations: 0,
        fileLedger: null,
        spent: { cost: 0, tokens: 0 },
        spentToday: undefined,
        recentBills: undefined,
        recentBillsToday: undefined,
        allowed: { continuations: 0, cost: 0, tokens: 0 },
        unproductiveReplies: 0,
        ledger: null,
        backoffUntil: null,
        consecutiveFailures: 0,
        pausedAt: null,
        resumedAt: null,
        pauseMessageId: null,
        pauseLedger: null,
      });
    });

    it("from the row, with its ledgers parsed and a recovery as a flag", () => {
      const baseline = ledgerOf(todos);
      const pause = ledgerOf([{ content: "b", status: "in_progress" }]);
      const durable = decisionInput(
        context({
          row: row({
            parentId: "ses_parent",
            stoppedAt: NOW - 1,
            stopSource: "tui",
            recoveringSince: NOW - 2,
            lastErrorAt: NOW - 3,
            lastErrorKind: "transient",
            lastErrorName: "APIError",
            errorStreak: 2,
            lastErrorRetryAfterMs: 4000,
            abortedAt: NOW - 4,
            tokenLimitAt: NOW - 5,
            continuations: 7,
            stagnantContinuations: 1,
            workContinuations: 5,
            fileLedger: '{"files":{"/p/x":["h1",null]}}',
            continuationCost: 0.42,
            continuationTokens: 1234,
            allowedContinuations: 10,
            allowedCost: 0.5,
            allowedTokens: 20_000,
            unproductiveReplies: 3,
            todoSnapshot: serializeLedger(baseline),
            backoffUntil: NOW + 6,
            consecutiveFailures: 4,
            pausedAt: NOW - 7,
            resumedAt: NOW - 10,
            pauseMessageId: "msg_took_over",
            pauseBaseline: serializeLedger(pause),
          }),
          userCancelledAt: NOW - 8,
          answeredBy: { injectionId: "inj_other", firedAt: NOW - 9 },
          parked: { parkId: "park_1", reason: "limit", wakeAt: NOW + 60_000 },
          spending: {
            today: 3.5,
            recentBills: [{ cost: 0.1, tokens: 100 }],
            recentBillsToday: [{ cost: 0.2, tokens: 9 }],
          },
        }),
      ).durable;
      expect(durable).toStrictEqual({
        parentId: "ses_parent",
        stoppedAt: NOW - 1,
        stopSource: "tui",
        userCancelledAt: NOW - 8,
        answeredBy: { injectionId: "inj_other", firedAt: NOW - 9 },
        parked: { parkId: "park_1", reason: "limit", wakeAt: NOW + 60_000 },
        verification: null,
        recovering: true,
        lastErrorAt: NOW - 3,
        lastErrorKind: "transient",
        lastErrorName: "APIError",
        errorStreak: 2,
        lastErrorRetryAfterMs: 4000,
        abortedAt: NOW - 4,
        tokenLimitAt: NOW - 5,
        continuations: 7,
        stagnantContinuations: 1,
        workContinuations: 5,
        fileLedger: { files: { "/p/x": ["h1", null] } },
        spent: { cost: 0.42, tokens: 1234 },
        spentToday: 3.5,
        recentBills: [{ cost: 0.1, tokens: 100 }],
        recentBillsToday: [{ cost: 0.2, tokens: 9 }],
        allowed: { continuations: 10, cost: 0.5, tokens: 20_000 },
        unproductiveReplies: 3,
        ledger: baseline,
        backoffUntil: NOW + 6,
        consecutiveFailures: 4,
        pausedAt: NOW - 7,
        resumedAt: NOW - 10,
        pauseMessageId: "msg_took_over",
        pauseLedger: pause,
      });
    });

    it("unreadable ledgers read as none", () => {
      const durable = decisionInput(context({ row: row({ todoSnapshot: "{not json", pauseBaseline: "42" }) })).durable;
      expect(durable.ledger).toBeNull();
      expect(durable.pauseLedger).toBeNull();
    });

    // A child session must be recognised from whichever source knows its parent: the row, then events, then OpenCode.
    it.each<{ recorded: string | null; sighted?: string | null; host?: string | null; expected: string | null }>([
      { recorded: "ses_row", sighted: "ses_event", host: "ses_host", expected: "ses_row" },
      { recorded: null, sighted: "ses_event", host: "ses_host", expected: "ses_event" },
      { recorded: null, sighted: undefined, host: "ses_host", expected: "ses_host" },
      { recorded: null, sighted: null, host: "ses_host", expected: "ses_host" },
      { recorded: null, sighted: undefined, host: undefined, expected: null },
    ])(
      "parent: row $recorded, events $sighted, OpenCode $host → $expected",
      ({ recorded, sighted, host, expected }) => {
        const input = decisionInput(
          context({
            row: row({ parentId: recorded }),
            seen: seen({ parentId: sighted }),
            facts: facts({ parentId: host }),
          }),
        );
        expect(input.durable.parentId).toBe(expected);
      },
    );
  });
});

describe("agentChoice", () => {
  const recorded = row({ agent: "build", modelProvider: "anthropic", modelId: "claude", variant: "high" });
  const fromRow = { agent: "build", providerId: "anthropic", modelId: "claude", variant: "high" };

  it("the latest real message wins as a whole, even where it says less than the row", () => {
    const latest = { messageId: "msg_1", agent: "plan" };
    expect(agentChoice(recorded, facts({ messages: messages({ latestReal: latest }) }))).toBe(latest);
    const modelOnly = { messageId: "msg_2", providerId: "openai", modelId: "gpt" };
    expect(agentChoice(recorded, facts({ messages: messages({ latestReal: modelOnly }) }))).toBe(modelOnly);
  });

  it("a latest message naming neither agent nor model falls back to the row", () => {
    const silent = { messageId: "msg_1", providerId: "openai", variant: "low" };
    expect(agentChoice(recorded, facts({ messages: messages({ latestReal: silent }) }))).toStrictEqual(fromRow);
  });

  it("without messages read, as last recorded", () => {
    expect(agentChoice(recorded, undefined)).toStrictEqual(fromRow);
    expect(agentChoice(recorded, facts())).toStrictEqual(fromRow);
    expect(agentChoice(recorded, facts({ messages: messages() }))).toStrictEqual(fromRow);
  });

  it("nothing recorded and nothing read: no choice (OpenCode's defaults apply)", () => {
    const none = { agent: undefined, providerId: undefined, modelId: undefined, variant: undefined };
    expect(agentChoice(undefined, undefined)).toStrictEqual(none);
    expect(agentChoice(row(), facts())).toStrictEqual(none);
  });
});

describe("armPatch", () => {
  const go = (extra: Partial<Extract<Decision, { verdict: "continue" }>> = {}) =>
    ({ verdict: "continue", stagnantStreak: 0, workStreak: 0, unproductiveStreak: 0, ...extra }) as const;

  it("writes nothing for a decision with nothing to record (the look owed is taken by the arming: look-owed.ts)", () => {
    expect(armPatch(go(), facts())).toStrictEqual({});
  });

  it("records the agent and model of the latest real message", () => {
    const latest = { messageId: "m", agent: "build", providerId: "anthropic", modelId: "claude", variant: "high" };
    expect(armPatch(go(), facts({ messages: messages({ latestReal: latest }) }))).toStrictEqual({
      agent: "build",
      modelProvider: "anthropic",
      modelId: "claude",
      variant: "high",
    });
  });

  it("a model without a variant clears the recorded one; half a model is not recorded", () => {
    const noVariant = { messageId: "m", providerId: "anthropic", modelId: "claude" };
    expect(armPatch(go(), facts({ messages: messages({ latestReal: noVariant }) }))).toStrictEqual({
      modelProvider: "anthropic",
      modelId: "claude",
      variant: null,
    });
    const half = { messageId: "m", agent: "build", providerId: "anthropic" };
    expect(armPatch(go(), facts({ messages: messages({ latestReal: half }) }))).toStrictEqual({
      agent: "build",
    });
  });

  it("lifts the takeover pause when the decision says it lifted", () => {
    expect(armPatch(go({ pauseLifted: "progress" }), facts())).toStrictEqual({
      pausedAt: null,
      pauseMessageId: null,
      pauseBaseline: null,
    });
  });

  it("forgets the provider errors when the decision says they are over", () => {
    expect(armPatch(go({ errorsResolved: true }), facts())).toStrictEqual({
      lastErrorAt: null,
      lastErrorName: null,
      lastErrorKind: null,
      lastErrorRetryAfterMs: null,
      errorStreak: 0,
    });
  });

  it("never touches the loop counts or the failure count (those change when a continuation goes out)", () => {
    const latest = { messageId: "m", agent: "build", providerId: "p", modelId: "m1" };
    const patch = armPatch(
      go({ pauseLifted: "rewritten", errorsResolved: true, stagnantStreak: 2, workStreak: 3, unproductiveStreak: 1 }),
      facts({ messages: messages({ latestReal: latest }) }),
    );
    for (const key of [
      "continuations",
      "stagnantContinuations",
      "workContinuations",
      "fileLedger",
      "unproductiveReplies",
      "consecutiveFailures",
      "backoffUntil",
      "todoSnapshot",
    ])
      expect(patch).not.toHaveProperty(key);
  });
});
