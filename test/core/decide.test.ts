import { describe, expect, it } from "vitest";
import { decide, errorCooldownMs, GUARD_ORDER } from "../../src/core/decide.js";
import { explain } from "../../src/core/explain.js";
import type { Decision, DecisionInput, DurableFacts } from "../../src/core/decision.js";
import type { MessageFacts } from "../../src/core/messages.js";
import { SKIP_REASONS } from "../../src/core/reasons.js";
import { stagnantStreak, unproductiveStreak } from "../../src/core/streaks.js";
import { ledgerOf, mergeLedger, type Todo } from "../../src/core/todos.js";

const NOW = 1_700_000_000_000;
const open: Todo[] = [
  { content: "a", status: "completed" },
  { content: "b", status: "in_progress" },
  { content: "c", status: "pending" },
];
const ledger = ledgerOf(open);

function messages(facts: Partial<MessageFacts> = {}): MessageFacts {
  return { unfinishedQuestion: false, ownInjectionIds: [], ownMessageIds: [], ...facts };
}

function input(
  overrides: Partial<Omit<DecisionInput, "durable" | "live" | "config">> & {
    durable?: Partial<DurableFacts>;
    live?: DecisionInput["live"];
    config?: Partial<DecisionInput["config"]>;
  } = {},
): DecisionInput {
  return {
    stage: overrides.stage ?? "idle",
    now: overrides.now ?? NOW,
    todos: "todos" in overrides ? overrides.todos : open,
    ...(overrides.reportedTodos ? { reportedTodos: overrides.reportedTodos } : {}),
    ...(overrides.retrying ? { retrying: true } : {}),
    config: {
      enabled: true,
      continueChildSessions: false,
      errorCooldownMs: 3000,
      skipAgents: ["plan", "compaction"],
      stagnationLimit: 3,
      workWithoutProgressLimit: 8,
      maxContinuations: 20,
      maxContinuationCost: 0,
      maxContinuationTokens: 0,
      dailyContinuationCost: 0,
      maxRetries: 3,
      retryMaxMs: 60_000,
      pauseAfterUserMessage: true,
      unproductiveLimit: 1,
      continueAfterCompaction: false,
      verify: null,
      ...overrides.config,
    },
    durable: { recovering: false, continuations: 0, stagnantContinuations: 0, ...overrides.durable },
    live: { agent: "build", agentCanWrite: true, status: "idle", ...overrides.live },
  };
}

function reason(i: DecisionInput): string {
  const d = decide(i);
  return d.verdict === "skip" ? d.reason : "continue";
}

describe("decide: each guard says no with its reason", () => {
  const cases: Array<[string, DecisionInput]> = [
    ["disabled", input({ config: { enabled: false } })],
    ["session_filtered", input({ durable: { parentId: "ses_parent" } })],
    ["stopped", input({ durable: { stoppedAt: NOW - 10 } })],
    ["user_key", input({ durable: { userCancelledAt: NOW - 10 } })],
    ["parked", input({ durable: { parked: { parkId: "park_1", reason: "limit", wakeAt: NOW + 60_000 } } })],
    ["recovering", input({ durable: { recovering: true } })],
    ["recovering", input({ live: { status: "retry" } })],
    ["aborted", input({ durable: { abortedAt: NOW - 1 } })],
    ["aborted", input({ live: { messages: messages({ unansweredErrorKind: "abort" }) } })],
    ["token_limit", input({ durable: { tokenLimitAt: NOW - 1 } })],
    ["token_limit", input({ live: { messages: messages({ unansweredErrorKind: "token_limit" }) } })],
    [
      "provider_error",
      input({
        live: {
          messages: messages({
            unansweredErrorKind: "permanent",
            unansweredError: { name: "APIError", statusCode: 401 },
          }),
        },
      }),
    ],
    ["provider_error", input({ durable: { lastErrorAt: NOW - 1, lastErrorKind: "permanent" } })],
    ["errors_persist", input({ durable: { lastErrorAt: NOW - 600_000, lastErrorKind: "transient", errorStreak: 4 } })],
    [
      "error_cooldown",
      input({ stage: "deadline", durable: { lastErrorAt: NOW - 2999, lastErrorKind: "transient", errorStreak: 1 } }),
    ],
    ["backoff", input({ stage: "deadline", durable: { backoffUntil: NOW + 1 } })],
    ["in_flight", input({ live: { inFlight: true } })],
    ["in_flight", input({ durable: { answeredBy: { injectionId: "inj_other", firedAt: NOW - 5 } } })],
    ["busy", input({ live: { status: "busy" } })],
    ["children_running", input({ live: { busyChildren: 2 } })],
    ["waiting_for_user", input({ live: { pendingRequests: 1 } })],
    ["waiting_for_user", input({ live: { messages: messages({ unfinishedQuestion: true }) } })],
    [
      "waiting_for_user",
      input({ live: { messages: messages({ textQuestion: "Should I use PostgreSQL or SQLite?" }) } }),
    ],
    ["compaction", input({ live: { messages: messages({ compaction: "running" }), agent: "build" } })],
    ["compaction", input({ live: { messages: messages({ compaction: "finished" }), agent: "build" } })],
    ["compaction", input({ live: { compactedRecently: true } })],
    ["agent_skipped", input({ live: { agent: "plan" } })],
    ["agent_skipped", input({ live: { agent: "Plan" } })],
    ["no_write_permission", input({ live: { agent: "reader", agentCanWrite: false } })],
    ["todo_fetch_failed", input({ todos: "fetch_failed" })],
    ["no_todos", input({ todos: [] })],
    [
      "verify_failed",
      input({
        todos: [{ content: "a", status: "completed" }],
        config: { verify: { command: "npm test", maxRuns: 2 } },
        durable: {
          continuations: 1,
          verification: {
            state: "failed",
            command: "npm test",
            afterContinuations: 1,
            failures: 2,
            repeated: false,
          },
        },
      }),
    ],
    [
      "todos_complete",
      input({
        todos: [
          { content: "a", status: "completed" },
          { content: "b", status: "cancelled" },
        ],
      }),
    ],
    [
      "todos_complete",
      input({
        todos: [
          { content: "a", status: "blocked" },
          { content: "b", status: "deleted" },
        ],
      }),
    ],
    ["user_took_over", input({ durable: { pausedAt: NOW - 5000, pauseMessageId: "msg_1", pauseLedger: ledger } })],
    [
      "no_progress_reply",
      input({
        durable: { ledger, continuations: 1 },
        live: { messages: messages({ replyToLastInjection: "text_only" }) },
      }),
    ],
    ["stagnation", input({ durable: { ledger, stagnantContinuations: 2 } })],
    ["cost_budget", input({ durable: { spent: { cost: 1, tokens: 10 } }, config: { maxContinuationCost: 1 } })],
    ["budget_exhausted", input({ durable: { continuations: 20 } })],
    ["gave_up", input({ durable: { consecutiveFailures: 4 } })],
    ["gave_up", input({ stage: "deadline", durable: { consecutiveFailures: 4 } })],
  ];
  it.each(cases)("%s", (expected, i) => {
    expect(reason(i)).toBe(expected);
  });

  it("gave_up holds only beyond maxRetries failed attempts in a row (the last retry still goes out)", () => {
    expect(reason(input({ durable: { consecutiveFailures: 3 } }))).toBe("continue");
    expect(reason(input({ durable: { consecutiveFailures: 2 }, config: { maxRetries: 1 } }))).toBe("gave_up");
  });

  it("every skip reason of the contract has a guard, in the documented order", () => {
    expect(GUARD_ORDER).toEqual(SKIP_REASONS);
    expect(new Set(cases.map(([r]) => r))).toEqual(new Set(SKIP_REASONS));
  });

  it("continues when every guard passes, with the todo summary and the streaks", () => {
    expect(decide(input())).toEqual({
      verdict: "continue",
      summary: { total: 3, completed: 1, open: 2 },
      stagnantStreak: 0,
      workStreak: 0,
      unproductiveStreak: 0,
    });
  });

  it("skip details carry the stage", () => {
    const d = decide(input({ stage: "before_prompt", durable: { stoppedAt: 5 } }));
    expect(d).toMatchObject({ verdict: "skip", reason: "stopped", detail: { stage: "before_prompt", stoppedAt: 5 } });
  });
});

describe("decide: a parked session", () => {
  const parked = { parkId: "park_1", reason: "agent", wakeAt: NOW + 90_000 } as const;

  it("is held at every stage, saying which park and how long is left", () => {
    for (const stage of ["idle", "deadline", "before_prompt"] as const)
      expect(decide(input({ stage, durable: { parked } }))).toEqual({
        verdict: "skip",
        reason: "parked",
        detail: { stage, parkId: "park_1", park: "agent", until: NOW + 90_000, wakesInMs: 90_000 },
      });
  });

  it("is held even when a person's stop would also hold it: the stop comes first in the chain", () => {
    expect(decide(input({ durable: { parked, stoppedAt: NOW - 1 } }))).toMatchObject({ reason: "stopped" });
  });

  it("yields to nothing after it: with the park gone the same session continues", () => {
    expect(decide(input({ durable: { parked: null } })).verdict).toBe("continue");
  });

  it("is told as the wait left, in a person's units", () => {
    const words = (ms: number) => explain("skipped", "parked", { park: "limit", wakesInMs: ms })!.text;
    expect(words(40_000)).toBe("parked: limit lifts in 40 s");
    expect(words(12 * 60_000 - 1)).toBe("parked: limit lifts in 12 min");
    expect(words(2 * 3_600_000 + 13 * 60_000)).toBe("parked: limit lifts in 2 h 13 min");
    expect(words(3 * 3_600_000)).toBe("parked: limit lifts in 3 h");
    expect(words(26 * 3_600_000)).toBe("parked: limit lifts in 1 d 2 h");
    expect(words(-5000)).toBe("parked: limit lifts now");
    expect(explain("skipped", "parked", { park: "agent", wakesInMs: 90_000 })!.text).toBe(
      "parked as asked: wakes in 2 min",
    );
    expect(explain("skipped", "parked", { park: "opencode_retry" })!.text).toBe("parked: OpenCode retries");
  });
});

describe("decide: an idle another continuation answered", () => {
  const answeredBy = { injectionId: "inj_other", firedAt: NOW - 5 };

  it("is skipped as in flight, naming that continuation", () => {
    expect(decide(input({ durable: { answeredBy } }))).toMatchObject({
      verdict: "skip",
      reason: "in_flight",
      detail: { stage: "idle", answeredBy: "inj_other", firedAt: NOW - 5 },
    });
  });

  it("before its todo read's failure is judged: no retry is owed for an idle already answered", () => {
    expect(reason(input({ durable: { answeredBy }, todos: "fetch_failed" }))).toBe("in_flight");
  });
});

describe("decide: our last continuation unanswered while OpenCode's status could not be read", () => {
  // Seen with two processes on one database under load: a process that saw the idle late read the messages (our
  // continuation last, no reply) but not the status, and its memory said idle; it sent a second continuation on top.
  const unanswered = messages({ ownInjectionIds: ["inj_1"], ownMessageIds: ["msg_1"], replyToLastInjection: "none" });

  it.each(["idle", "before_prompt"] as const)("holds a new one at %s (in flight, naming it)", (stage) => {
    expect(decide(input({ stage, live: { status: "idle", statusUnread: true, messages: unanswered } }))).toMatchObject({
      verdict: "skip",
      reason: "in_flight",
      detail: { stage, unanswered: "inj_1", status: "unread" },
    });
  });

  it("before its todo read's failure is judged", () => {
    const live = { statusUnread: true, messages: unanswered };
    expect(reason(input({ live, todos: "fetch_failed" }))).toBe("in_flight");
  });

  it.each([
    ["OpenCode said idle (a turn that never started is the start check's)", { status: "idle" as const }, {}],
    ["a reply came", { statusUnread: true, messages: { ...unanswered, replyToLastInjection: "worked" as const } }, {}],
    [
      "a person wrote after it",
      { statusUnread: true, messages: { ...unanswered, replyToLastInjection: undefined } },
      {},
    ],
    ["it is the retry of that one", { statusUnread: true, messages: unanswered }, { retrying: true }],
  ])("lets one go when %s", (_, live, extra) => {
    expect(reason(input({ stage: "before_prompt", live: { status: "idle", ...live }, ...extra }))).toBe("continue");
  });
});

describe("decide: guard order and boundaries", () => {
  it("the first failing guard in the documented order wins", () => {
    const all = input({
      config: { enabled: false },
      durable: { stoppedAt: 1, recovering: true, abortedAt: 1 },
      live: { inFlight: true, status: "busy" },
      todos: [],
    });
    expect(reason(all)).toBe("disabled");
    expect(reason({ ...all, config: { ...all.config, enabled: true } })).toBe("stopped");
    const unstopped = input({ durable: { recovering: true, abortedAt: 1 }, live: { inFlight: true }, todos: [] });
    expect(reason(unstopped)).toBe("recovering");
  });

  it("child sessions are continued when configured", () => {
    expect(reason(input({ durable: { parentId: "p" }, config: { continueChildSessions: true } }))).toBe("continue");
  });

  it("unknown facts pass (the pre-check before anything is fetched)", () => {
    expect(decide(input({ todos: undefined, live: {} }))).toEqual({
      verdict: "continue",
      summary: undefined,
      stagnantStreak: 0,
      workStreak: 0,
      unproductiveStreak: 0,
    });
  });

  it("budget: maxContinuations since the last real user message", () => {
    expect(reason(input({ durable: { continuations: 19 } }))).toBe("continue");
    expect(reason(input({ durable: { continuations: 2 }, config: { maxContinuations: 2 } }))).toBe("budget_exhausted");
    // What they cost, once billed, rides on the stop.
    const billed = { continuations: 2, spent: { cost: 0.42, tokens: 9000 } };
    expect(decide(input({ durable: billed, config: { maxContinuations: 2 } }))).toMatchObject({
      detail: { continuations: 2, limit: 2, spent: 0.42, tokens: 9000 },
    });
  });

  it("budget: continuations allowed since count beyond maxContinuations, and the stop names the limit it used", () => {
    const allowed = (continuations: number) => ({ continuations, cost: 0, tokens: 0 });
    const config = { maxContinuations: 2 };
    expect(reason(input({ durable: { continuations: 2, allowed: allowed(3) }, config }))).toBe("continue");
    expect(reason(input({ durable: { continuations: 4, allowed: allowed(3) }, config }))).toBe("continue");
    expect(decide(input({ durable: { continuations: 5, allowed: allowed(3) }, config }))).toEqual({
      verdict: "skip",
      reason: "budget_exhausted",
      detail: { stage: "idle", continuations: 5, limit: 5, allowed: 3 },
    });
  });
});

describe("a pre-check's budget stop on a list reported finished", () => {
  const closed = [
    { content: "a", status: "completed" },
    { content: "b", status: "cancelled" },
  ];
  const over = { durable: { continuations: 2 }, config: { maxContinuations: 2 } };

  it("is todos_complete (the last continuation finished the list), said to come from the list reported", () => {
    expect(decide(input({ ...over, todos: undefined, reportedTodos: closed }))).toEqual({
      verdict: "skip",
      reason: "todos_complete",
      detail: { stage: "idle", total: 2, completed: 1, reported: true },
    });
    const spent = { dailyContinuationCost: 1, maxContinuations: 20 };
    const day = {
      durable: { continuations: 1, spentToday: 1 },
      config: spent,
      todos: undefined,
      reportedTodos: closed,
    };
    expect(reason(input(day))).toBe("todos_complete");
  });

  it("stays a budget stop when a reported todo is open, none was reported, or the todos were read", () => {
    const openOne = [...closed, { content: "c", status: "pending" }];
    expect(reason(input({ ...over, todos: undefined, reportedTodos: openOne }))).toBe("budget_exhausted");
    expect(reason(input({ ...over, todos: undefined }))).toBe("budget_exhausted");
    expect(reason(input({ ...over, todos: undefined, reportedTodos: [] }))).toBe("budget_exhausted");
    // Read, the todos judge for themselves (open here): the list reported earlier does not count.
    expect(reason(input({ ...over, reportedTodos: closed }))).toBe("budget_exhausted");
  });

  it("never turns a continuation or another stop into one", () => {
    expect(reason(input({ todos: undefined, reportedTodos: closed }))).toBe("continue");
    const stopped = { durable: { continuations: 2, stoppedAt: NOW - 1 }, config: { maxContinuations: 2 } };
    expect(reason(input({ ...stopped, todos: undefined, reportedTodos: closed }))).toBe("stopped");
  });
});

describe("waiting for a backoff or an error cooldown", () => {
  it("a new idle is not skipped: it continues, not before the cooldown ends", () => {
    const d = decide(input({ durable: { lastErrorAt: NOW - 1000, lastErrorKind: "transient", errorStreak: 1 } }));
    expect(d).toMatchObject({ verdict: "continue", notBefore: NOW + 2000, waitingFor: "error_cooldown" });
  });

  it("a new idle during a failed prompt's backoff continues when the backoff ends (no stall)", () => {
    expect(decide(input({ durable: { backoffUntil: NOW + 4000 } }))).toMatchObject({
      verdict: "continue",
      notBefore: NOW + 4000,
      waitingFor: "backoff",
    });
    expect(reason(input({ stage: "deadline", durable: { backoffUntil: NOW } }))).toBe("continue");
    expect(reason(input({ stage: "before_prompt", durable: { backoffUntil: NOW + 10 } }))).toBe("backoff");
  });

  it("the cooldown doubles with each error in a row, is capped, and a provider's retry-after wins", () => {
    const config = { errorCooldownMs: 3000, retryMaxMs: 60_000 };
    expect([1, 2, 3, 4, 5, 6, 10].map((n) => errorCooldownMs(config, n))).toEqual([
      3000, 6000, 12_000, 24_000, 48_000, 60_000, 60_000,
    ]);
    expect(errorCooldownMs(config, 1, 30_000)).toBe(30_000);
    expect(errorCooldownMs(config, 1, 500)).toBe(3000);
    expect(errorCooldownMs(config, 1, 10 * 3_600_000)).toBe(3_600_000);
  });

  it("the cooldown of a later error in a row is longer", () => {
    const durable = { lastErrorAt: NOW - 5000, lastErrorKind: "transient", errorStreak: 2 } as const;
    expect(decide(input({ durable }))).toMatchObject({ notBefore: NOW + 1000 });
    expect(decide(input({ durable: { ...durable, lastErrorRetryAfterMs: 20_000 } }))).toMatchObject({
      notBefore: NOW + 15_000,
    });
  });

  it("aborts, token limits and permanent errors have no cooldown: they have their own guards", () => {
    expect(decide(input({ durable: { lastErrorAt: NOW - 1, lastErrorKind: "abort" } }))).not.toHaveProperty(
      "notBefore",
    );
  });

  it("a wall clock that went back stretches neither a cooldown nor a backoff", () => {
    expect(
      decide(input({ durable: { lastErrorAt: NOW + 3_600_000, lastErrorKind: "transient", errorStreak: 1 } })),
    ).not.toHaveProperty("notBefore");
    expect(decide(input({ durable: { backoffUntil: NOW + 3 * 3_600_000 } }))).not.toHaveProperty("notBefore");
    expect(decide(input({ durable: { backoffUntil: NOW + 59_000 } }))).toMatchObject({ notBefore: NOW + 59_000 });
  });
});

describe("provider errors", () => {
  const transient = { lastErrorAt: NOW - 600_000, lastErrorKind: "transient" } as const;

  it("errors persist only beyond maxRetries re-checks in a row", () => {
    expect(reason(input({ durable: { ...transient, errorStreak: 3 } }))).toBe("continue");
    expect(reason(input({ durable: { ...transient, errorStreak: 4 } }))).toBe("errors_persist");
    expect(reason(input({ durable: { ...transient, errorStreak: 2 }, config: { maxRetries: 1 } }))).toBe(
      "errors_persist",
    );
  });

  it("a turn that ended well since means the errors are over (and their count resets)", () => {
    const d = decide(input({ durable: { ...transient, errorStreak: 4 }, live: { messages: messages() } }));
    expect(d).toMatchObject({ verdict: "continue", errorsResolved: true });
    const failing = input({
      durable: { ...transient, errorStreak: 4 },
      live: { messages: messages({ unansweredErrorKind: "transient" }) },
    });
    expect(reason(failing)).toBe("errors_persist");
  });

  it("a pre-check never stops on recorded errors (a good turn since can only be seen in the messages)", () => {
    expect(reason(input({ todos: undefined, live: {}, durable: { ...transient, errorStreak: 9 } }))).toBe("continue");
    expect(
      reason(input({ todos: undefined, live: {}, durable: { lastErrorAt: NOW, lastErrorKind: "permanent" } })),
    ).toBe("continue");
  });

  it("a permanent error stops until a real user message; its detail names it", () => {
    const d = decide(
      input({
        live: {
          messages: messages({
            unansweredErrorKind: "permanent",
            unansweredError: { name: "APIError", statusCode: 403, message: "forbidden" },
          }),
        },
      }),
    );
    expect(d).toMatchObject({
      verdict: "skip",
      reason: "provider_error",
      detail: { source: "last_assistant_message", statusCode: 403, errorName: "APIError" },
    });
    expect(
      reason(input({ durable: { lastErrorAt: NOW, lastErrorKind: "permanent" }, live: { messages: messages() } })),
    ).toBe("continue");
  });
});

describe("an error OpenCode reported only as an event (a prompt refused after its 204)", () => {
  const refusedAt = NOW - 5000;
  const permanent = { lastErrorAt: refusedAt, lastErrorKind: "permanent" } as const;

  it("holds while the messages show no turn since: they show no error only because the refused prompt wrote none", () => {
    // The messages read before the prompt: the person's request and the turn that ended well before the refusal.
    const before = messages({ turnEndedWellAt: refusedAt - 3000 });
    expect(decide(input({ stage: "before_prompt", durable: permanent, live: { messages: before } }))).toMatchObject({
      verdict: "skip",
      reason: "provider_error",
      detail: { stage: "before_prompt", lastErrorAt: refusedAt },
    });
    // No assistant message at all: no turn ended well since either.
    const none = messages({ turnEndedWellAt: null });
    expect(reason(input({ stage: "before_prompt", durable: permanent, live: { messages: none } }))).toBe(
      "provider_error",
    );
  });

  it("is over once a turn ended well since (a reply after the error)", () => {
    const after = messages({ turnEndedWellAt: refusedAt + 1000 });
    expect(reason(input({ durable: permanent, live: { messages: after } }))).toBe("continue");
  });

  it("a transient one is retried all the same (its retries are bounded by gave_up)", () => {
    const transient = { lastErrorAt: refusedAt, lastErrorKind: "transient", errorStreak: 4 } as const;
    const before = messages({ turnEndedWellAt: refusedAt - 3000 });
    expect(decide(input({ durable: transient, live: { messages: before } }))).toMatchObject({
      verdict: "continue",
      errorsResolved: true,
    });
  });
});

describe("the user took over", () => {
  const paused = { pausedAt: NOW - 5000, pauseMessageId: "msg_user", pauseLedger: ledger };

  it("holds while the todos have not moved since the user's message", () => {
    expect(decide(input({ durable: paused }))).toMatchObject({
      verdict: "skip",
      reason: "user_took_over",
      detail: { messageId: "msg_user", pausedAt: NOW - 5000 },
    });
  });

  it("lifts on progress, on a rewritten list, or when the message answered our question", () => {
    const progressed = open.map((t) => (t.content === "b" ? { ...t, status: "completed" } : t));
    expect(decide(input({ durable: paused, todos: progressed }))).toMatchObject({
      verdict: "continue",
      pauseLifted: "progress",
    });
    const rewritten = [
      { content: "x", status: "pending" },
      { content: "y", status: "pending" },
      { content: "c", status: "pending" },
    ];
    expect(decide(input({ durable: paused, todos: rewritten }))).toMatchObject({
      verdict: "continue",
      pauseLifted: "rewritten",
    });
    expect(decide(input({ durable: paused, live: { messages: messages({ answersQuestion: true }) } }))).toMatchObject({
      verdict: "continue",
      pauseLifted: "answered_question",
    });
  });

  it("churn and appended todos do not lift it", () => {
    const churned = open.map((t) => (t.content === "b" ? { ...t, status: "pending" } : t));
    expect(reason(input({ durable: paused, todos: churned }))).toBe("user_took_over");
    expect(reason(input({ durable: paused, todos: [...open, { content: "d", status: "pending" }] }))).toBe(
      "user_took_over",
    );
  });

  it("never holds a pre-check (the todos decide), and is off with pauseAfterUserMessage: false", () => {
    expect(reason(input({ durable: paused, todos: undefined }))).toBe("continue");
    expect(reason(input({ durable: paused, config: { pauseAfterUserMessage: false } }))).toBe("continue");
  });

  it("without a stored baseline, the ledger of the last continuations is the baseline", () => {
    expect(reason(input({ durable: { pausedAt: NOW, pauseMessageId: "m", ledger } }))).toBe("user_took_over");
  });
});

describe("a question asked in plain text", () => {
  it("is a pending question, with the question in the detail", () => {
    const d = decide(input({ live: { messages: messages({ textQuestion: "Which database do you prefer?" }) } }));
    expect(d).toMatchObject({
      verdict: "skip",
      reason: "waiting_for_user",
      detail: { source: "text_question", question: "Which database do you prefer?" },
    });
  });
});

describe("compaction", () => {
  const finished = messages({ compaction: "finished", latestReal: { messageId: "m", agent: "build" } });

  it("a running compaction always holds", () => {
    expect(
      decide(
        input({ live: { messages: messages({ compaction: "running" }) }, config: { continueAfterCompaction: true } }),
      ),
    ).toMatchObject({ reason: "compaction", detail: { state: "running" } });
  });

  it("a finished one holds until the next real activity, unless continueAfterCompaction", () => {
    expect(decide(input({ live: { messages: finished } }))).toMatchObject({
      reason: "compaction",
      detail: { state: "finished" },
    });
    expect(
      reason(input({ live: { messages: finished, agent: "build" }, config: { continueAfterCompaction: true } })),
    ).toBe("continue");
  });

  it("with continueAfterCompaction, only once the real agent is known from the messages", () => {
    const config = { continueAfterCompaction: true };
    expect(decide(input({ live: { compactedRecently: true, agent: undefined }, config }))).toMatchObject({
      reason: "compaction",
      detail: { agentKnown: false },
    });
    // The pre-check does not stop on it: the messages that name the agent are read next.
    expect(reason(input({ todos: undefined, live: { compactedRecently: true, agent: undefined }, config }))).toBe(
      "continue",
    );
  });
});

describe("stagnation", () => {
  it("counts continuations in a row after which no todo made progress", () => {
    expect(
      stagnantStreak({
        ...input(),
        durable: { recovering: false, continuations: 1, stagnantContinuations: 0, ledger: null },
        todos: open,
      }),
    ).toBe(0);
    expect(
      stagnantStreak({
        ...input(),
        durable: { recovering: false, continuations: 1, stagnantContinuations: 0, ledger },
        todos: open,
      }),
    ).toBe(1);
    expect(
      stagnantStreak({
        ...input(),
        durable: { recovering: false, continuations: 3, stagnantContinuations: 2, ledger },
        todos: open,
      }),
    ).toBe(3);
  });

  it("progress resets the streak", () => {
    const moved = open.map((t) => (t.content === "b" ? { ...t, status: "completed" } : t));
    expect(decide(input({ durable: { ledger, stagnantContinuations: 2 }, todos: moved }))).toMatchObject({
      verdict: "continue",
      stagnantStreak: 0,
    });
  });

  it("with the default limit of 3, three unproductive continuations are sent, the fourth is refused", () => {
    let durable: DurableFacts = { recovering: false, continuations: 0, stagnantContinuations: 0, ledger: null };
    let sent = 0;
    for (let i = 0; i < 10; i++) {
      const d = decide(input({ durable }));
      if (d.verdict === "skip") {
        expect(d.reason).toBe("stagnation");
        break;
      }
      sent++;
      durable = {
        ...durable,
        continuations: durable.continuations + 1,
        stagnantContinuations: continued(d).stagnantStreak,
        ledger,
      };
    }
    expect(sent).toBe(3);
  });

  it("churn does not reset it: a todo toggled back and forth stops at the limit, not at the budget", () => {
    const states: Todo[][] = [
      [
        { content: "a", status: "in_progress" },
        { content: "b", status: "pending" },
      ],
      [
        { content: "a", status: "pending" },
        { content: "b", status: "pending" },
      ],
      [
        { content: "a", status: "in_progress" },
        { content: "b", status: "pending" },
      ],
      [
        { content: "a", status: "pending" },
        { content: "b", status: "in_progress" },
      ],
      [
        { content: "a", status: "in_progress" },
        { content: "b", status: "pending" },
      ],
      [
        { content: "a", status: "pending" },
        { content: "b", status: "pending" },
      ],
      [
        { content: "a", status: "in_progress" },
        { content: "b", status: "pending" },
      ],
    ];
    let durable: DurableFacts = { recovering: false, continuations: 0, stagnantContinuations: 0, ledger: null };
    const verdicts: string[] = [];
    for (const todos of states) {
      const d = decide(input({ durable, todos }));
      verdicts.push(d.verdict === "skip" ? d.reason : "continue");
      if (d.verdict === "skip") break;
      durable = {
        ...durable,
        continuations: durable.continuations + 1,
        stagnantContinuations: continued(d).stagnantStreak,
        ledger: mergeLedger(durable.ledger ?? ledgerOf([]), todos),
      };
    }
    // 1st: no baseline; 2nd: a moved back (no); 3rd: a again in progress (had it); 4th: b moved forward (progress);
    // then three in a row without a status never had before.
    expect(verdicts).toEqual(["continue", "continue", "continue", "continue", "continue", "continue", "stagnation"]);
  });
});

describe("text-only replies", () => {
  const after = (reply: "text_only" | "worked" | "none" | "errored", unproductiveReplies = 0) => ({
    durable: { recovering: false, continuations: 1, stagnantContinuations: 0, ledger, unproductiveReplies },
    todos: open,
    live: { messages: messages({ replyToLastInjection: reply }) },
  });

  it("count in a row; work or progress ends the streak; no reply yet leaves it", () => {
    expect(unproductiveStreak(after("text_only"))).toBe(1);
    expect(unproductiveStreak(after("text_only", 1))).toBe(2);
    expect(unproductiveStreak(after("worked", 2))).toBe(0);
    expect(unproductiveStreak(after("none", 1))).toBe(1);
    expect(unproductiveStreak(after("errored", 1))).toBe(1);
    const progressed = open.map((t) => (t.content === "c" ? { ...t, status: "in_progress" } : t));
    expect(unproductiveStreak({ ...after("text_only", 3), todos: progressed })).toBe(0);
  });

  it("a retry does not count again the reply its continuation was judged on, nor the turn's stagnation", () => {
    // Sent after a text-only reply that closed a todo (the streak 0, the todos the new baseline), then lost: the same
    // reply is the last one the retry sees, and the todos have not moved since that baseline.
    expect(unproductiveStreak({ ...after("text_only", 0), retrying: true })).toBe(0);
    expect(unproductiveStreak({ ...after("text_only", 1), retrying: true })).toBe(1);
    const retried = {
      ...after("text_only", 0),
      durable: { ...after("text_only", 0).durable, stagnantContinuations: 1 },
    };
    expect(decide(input({ ...retried, stage: "before_prompt", retrying: true }))).toMatchObject({
      verdict: "continue",
      unproductiveStreak: 0,
      stagnantStreak: 1,
    });
    // The same reply judged afresh (not a retry) stops the session: the difference is the retry alone.
    expect(reason(input({ ...retried, stage: "before_prompt" }))).toBe("no_progress_reply");
    const progressed = open.map((t) => (t.content === "c" ? { ...t, status: "in_progress" } : t));
    expect(unproductiveStreak({ ...after("text_only", 3), todos: progressed, retrying: true })).toBe(0);
  });

  it("stop at unproductiveLimit; a reply that did work falls under stagnationLimit instead", () => {
    expect(reason(input(after("text_only")))).toBe("no_progress_reply");
    expect(reason(input({ ...after("text_only"), config: { unproductiveLimit: 2 } }))).toBe("continue");
    expect(reason(input(after("worked")))).toBe("continue");
    expect(decide(input({ ...after("text_only"), config: { unproductiveLimit: 2 } }))).toMatchObject({
      unproductiveStreak: 1,
    });
  });
});

describe("work as progress", () => {
  /** A turn that answers our continuation and wrote `files` new files (each with content never seen before). */
  let written = 0;
  const wrote = (files: number): MessageFacts["turnFiles"] => ({
    answers: "own",
    files: Array.from({ length: files }, () => ({ path: `/p/f${++written}`, before: null, after: `h${written}` })),
  });
  const turn = (turnFiles: MessageFacts["turnFiles"]) => ({ messages: messages({ turnFiles }) });

  /**
   * Sends continuations while the guards allow, each turn described by `turns(i)` (the todos never move): how many
   * were sent and the refusal's detail.
   */
  function run(turns: (i: number) => MessageFacts["turnFiles"], config: Partial<DecisionInput["config"]> = {}) {
    let durable: DurableFacts = { recovering: false, continuations: 0, stagnantContinuations: 0, ledger: null };
    for (let sent = 0; sent < 100; sent++) {
      const d = decide(input({ durable, live: turn(turns(sent)), config }));
      if (d.verdict === "skip") return { sent, reason: d.reason, detail: d.detail };
      durable = {
        ...durable,
        continuations: durable.continuations + 1,
        stagnantContinuations: continued(d).stagnantStreak,
        workContinuations: continued(d).workStreak,
        ledger,
      };
    }
    return { sent: 100 };
  }

  it("a turn that changed files adds to the work count and holds the stagnant one; todo progress resets both", () => {
    const durable = { ledger, stagnantContinuations: 2, workContinuations: 3 };
    expect(decide(input({ durable, live: turn(wrote(2)) }))).toMatchObject({
      verdict: "continue",
      stagnantStreak: 2,
      workStreak: 4,
      progress: { counted: "files", filesChanged: 2, filesChurned: 0 },
    });
    expect(decide(input({ durable: { ...durable, stagnantContinuations: 1 }, live: turn(undefined) }))).toMatchObject({
      stagnantStreak: 2,
      workStreak: 3,
      progress: { counted: "none" },
    });
    const moved = open.map((t) => (t.content === "b" ? { ...t, status: "completed" } : t));
    expect(decide(input({ durable, live: turn(wrote(1)), todos: moved }))).toMatchObject({
      stagnantStreak: 0,
      workStreak: 0,
      progress: { counted: "todos" },
    });
  });

  it("the first continuation since the user's message has nothing to compare with: no progress said", () => {
    const d = decide(input({ durable: { ledger: null }, live: turn(wrote(1)) }));
    expect(d).toMatchObject({ verdict: "continue", stagnantStreak: 0, workStreak: 0 });
    expect(d).not.toHaveProperty("progress");
  });

  it("a steady worker: with the default 8, eight continuations are sent, the ninth is refused with what it saw", () => {
    expect(run(() => wrote(1))).toEqual({
      sent: 8,
      reason: "stagnation",
      detail: {
        stage: "idle",
        work: "files",
        workContinuations: 8,
        limit: 8,
        filesChanged: 1,
        unproductiveContinuations: 0,
      },
    });
  });

  it("files rewritten with what they had are not work: it stops as fast as a model that does nothing", () => {
    const same = { answers: "own" as const, files: [{ path: "/p/same", after: "h" }] };
    const sameLedger = { files: { "/p/same": ["h"] } };
    let durable: DurableFacts = { recovering: false, continuations: 0, stagnantContinuations: 0, ledger: null };
    let sent = 0;
    for (; sent < 20; sent++) {
      const d = decide(input({ durable: { ...durable, fileLedger: sameLedger }, live: turn(same) }));
      if (d.verdict === "skip") {
        expect(d.detail).toMatchObject({ unproductiveContinuations: 3, limit: 3, workContinuations: 0 });
        break;
      }
      expect(d).not.toMatchObject({ progress: { counted: "files" } });
      durable = {
        ...durable,
        stagnantContinuations: continued(d).stagnantStreak,
        workContinuations: continued(d).workStreak,
        ledger,
      };
    }
    expect(sent).toBe(3);
  });

  it("a person's turn is never counted as the model's work", () => {
    const theirs = { answers: "other" as const, files: [{ path: "/p/theirs", before: null, after: "x" }] };
    expect(decide(input({ durable: { ledger }, live: turn(theirs) }))).toMatchObject({
      stagnantStreak: 1,
      workStreak: 0,
      progress: { counted: "none" },
    });
  });

  it("0 turns it off: changed files never hold off the stagnation limit (the behaviour before work counted)", () => {
    expect(run(() => wrote(1), { workWithoutProgressLimit: 0 })).toMatchObject({
      sent: 3,
      detail: { unproductiveContinuations: 3, limit: 3 },
    });
  });

  it("work and idleness mixed stop within stagnationLimit - 1 + workWithoutProgressLimit", () => {
    for (const pattern of [
      (i: number) => (i % 2 === 0 ? wrote(1) : undefined),
      (i: number) => (i % 3 === 0 ? undefined : wrote(2)),
      (i: number) => (i < 8 ? wrote(1) : undefined),
    ]) {
      const { sent, reason } = run(pattern);
      expect(reason).toBe("stagnation");
      expect(sent).toBeLessThanOrEqual(3 - 1 + 8);
    }
    expect(run((i) => (i % 2 === 0 ? wrote(1) : undefined)).sent).toBe(3 - 1 + 3);
  });

  it("the deadline, which reads no messages, stops no turn of work the idle let through", () => {
    // Two turns without work, then one with: the idle continues (work 1, stagnant held at 2).
    const durable = { ledger, stagnantContinuations: 2, workContinuations: 0 };
    expect(decide(input({ stage: "idle", durable, live: turn(wrote(1)) }))).toMatchObject({
      verdict: "continue",
      stagnantStreak: 2,
      workStreak: 1,
    });
    // At the deadline only the events' todos are known: nothing is added, so it holds as the idle judged.
    expect(decide(input({ stage: "deadline", durable, live: {} }))).toMatchObject({ verdict: "continue" });
    // Todos that moved meanwhile still count there.
    const moved = open.map((t) => (t.content === "b" ? { ...t, status: "completed" } : t));
    expect(decide(input({ stage: "deadline", durable, live: {}, todos: moved }))).toMatchObject({ stagnantStreak: 0 });
    // Right before the prompt the messages are read again: a turn without work counts there.
    expect(decide(input({ stage: "before_prompt", durable, live: turn(undefined) }))).toMatchObject({
      verdict: "skip",
      reason: "stagnation",
    });
  });

  it("messages that could not be read count as no work", () => {
    expect(decide(input({ durable: { ledger, workContinuations: 2 }, live: {} }))).toMatchObject({
      stagnantStreak: 1,
      workStreak: 2,
      progress: { counted: "none" },
    });
  });

  it("the budget still applies to a worker", () => {
    expect(run(() => wrote(1), { maxContinuations: 5 })).toMatchObject({ sent: 5, reason: "budget_exhausted" });
  });
});

describe("done means checked (verify)", () => {
  const closed: Todo[] = [
    { content: "a", status: "completed" },
    { content: "b", status: "completed" },
  ];
  const VERIFY = { command: "npm test", maxRuns: 3 };
  const check = (facts: Partial<NonNullable<DurableFacts["verification"]>>) => ({
    state: "failed" as const,
    command: "npm test",
    afterContinuations: 2,
    failures: 1,
    repeated: false,
    exitCode: 1,
    outputTail: "1 failed",
    ...facts,
  });
  const finished = (verification?: DurableFacts["verification"], extra: Partial<DurableFacts> = {}) =>
    input({ todos: closed, config: { verify: VERIFY }, durable: { continuations: 2, verification, ...extra } });

  it("checks a list closed after continuations before calling it done", () => {
    expect(decide(finished())).toMatchObject({
      verdict: "verify",
      command: "npm test",
      summary: { open: 0, total: 2 },
      detail: { stage: "idle", command: "npm test" },
    });
  });

  it("without the option, or when no continuation went out, a closed list is done as before", () => {
    expect(reason(input({ todos: closed, durable: { continuations: 2 } }))).toBe("todos_complete");
    expect(reason(input({ todos: closed, config: { verify: VERIFY } }))).toBe("todos_complete");
  });

  it("waits while the check runs", () => {
    const d = decide(finished(check({ state: "running" })));
    expect(d).toMatchObject({ verdict: "skip", reason: "in_flight", detail: { verifying: "npm test" } });
  });

  it("a check that passed makes it done, and says so", () => {
    const d = decide(finished(check({ state: "passed", durationMs: 41_000, failures: 0 })));
    expect(d).toMatchObject({
      verdict: "skip",
      reason: "todos_complete",
      detail: { total: 2, completed: 2, verified: { command: "npm test", durationMs: 41_000 } },
    });
    expect(explain("skipped", "todos_complete", d.verdict === "skip" ? d.detail : {})?.text).toBe(
      "done, checked: npm test passed in 41 s",
    );
    // One the clock saw take no time is said as the shortest, never "passed in now".
    const instant = decide(finished(check({ state: "passed", durationMs: 0, failures: 0 })));
    expect(explain("skipped", "todos_complete", instant.verdict === "skip" ? instant.detail : {})?.text).toBe(
      "done, checked: npm test passed in 1 s",
    );
  });

  it("a check that failed continues the session with it", () => {
    const failed = check({});
    expect(decide(finished(failed))).toMatchObject({ verdict: "continue", checkFailed: failed });
  });

  it("a check from before the last continuation stands for nothing: the work is checked again", () => {
    expect(decide(finished(check({ afterContinuations: 1 })))).toMatchObject({ verdict: "verify" });
    expect(decide(finished(check({ state: "passed", afterContinuations: 1 })))).toMatchObject({ verdict: "verify" });
  });

  it("stops after maxRuns failures, or the same failure twice with no file changed, as stuck", () => {
    const spent = decide(finished(check({ failures: 3, exitCode: 2 })));
    expect(spent).toMatchObject({
      verdict: "skip",
      reason: "verify_failed",
      detail: { failures: 3, limit: 3, command: "npm test", exitCode: 2, output: "1 failed" },
    });
    const repeated = decide(finished(check({ failures: 2, repeated: true })));
    expect(repeated).toMatchObject({ verdict: "skip", reason: "verify_failed", detail: { repeated: true } });
    expect(explain("skipped", "verify_failed", { repeated: true })?.text).toBe(
      "stopped: the check failed the same way twice",
    );
    expect(explain("skipped", "verify_failed", { failures: 3 })?.text).toBe("stopped: the check failed 3 times");
  });

  it("a list reopened after a failed check is continued as any list with open todos", () => {
    const reopened = input({
      todos: open,
      config: { verify: VERIFY },
      durable: { continuations: 2, verification: check({ failures: 3 }), ledger },
    });
    const d = decide(reopened);
    expect(d.verdict).toBe("continue");
    expect(d.verdict === "continue" && d.checkFailed).toBeFalsy();
  });

  it("a pre-check, before the todos are read, never checks nor stops on a check", () => {
    expect(reason(input({ todos: undefined, config: { verify: VERIFY }, durable: { continuations: 2 } }))).toBe(
      "continue",
    );
  });
});

/** A decision a loop of continuations expects to continue (a check here would be a failure of the test's setup). */
function continued(d: Decision): Extract<Decision, { verdict: "continue" }> {
  if (d.verdict !== "continue") throw new Error(`expected a continuation, got ${d.verdict}`);
  return d;
}
