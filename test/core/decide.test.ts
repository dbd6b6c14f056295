import { describe, expect, it } from "vitest";
import { decide, GUARD_ORDER, stagnantStreak, type DecisionInput, type DurableFacts } from "../../src/core/decide.js";
import { SKIP_REASONS } from "../../src/core/reasons.js";
import type { Todo } from "../../src/core/todos.js";

const NOW = 1_700_000_000_000;
const open: Todo[] = [
  { content: "a", status: "completed" },
  { content: "b", status: "in_progress" },
  { content: "c", status: "pending" },
];

function input(overrides: Partial<Omit<DecisionInput, "durable" | "live" | "config">> & {
  durable?: Partial<DurableFacts>;
  live?: DecisionInput["live"];
  config?: Partial<DecisionInput["config"]>;
} = {}): DecisionInput {
  return {
    stage: overrides.stage ?? "idle",
    now: overrides.now ?? NOW,
    todos: "todos" in overrides ? overrides.todos : open,
    config: {
      enabled: true,
      continueChildSessions: false,
      errorCooldownMs: 3000,
      skipAgents: ["plan", "compaction"],
      stagnationLimit: 3,
      maxContinuations: 20,
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
    ["recovering", input({ durable: { recovering: true } })],
    ["recovering", input({ live: { status: "retry" } })],
    ["aborted", input({ durable: { abortedAt: NOW - 1 } })],
    ["aborted", input({ live: { messages: { unansweredErrorKind: "abort", unfinishedQuestion: false, ownInjectionIds: [] } } })],
    ["token_limit", input({ durable: { tokenLimitAt: NOW - 1 } })],
    ["token_limit", input({ live: { messages: { unansweredErrorKind: "token_limit", unfinishedQuestion: false, ownInjectionIds: [] } } })],
    ["error_cooldown", input({ durable: { lastErrorAt: NOW - 2999, lastErrorKind: "other" } })],
    ["backoff", input({ durable: { backoffUntil: NOW + 1 } })],
    ["in_flight", input({ live: { inFlight: true } })],
    ["busy", input({ live: { status: "busy" } })],
    ["children_running", input({ live: { busyChildren: 2 } })],
    ["waiting_for_user", input({ live: { pendingRequests: 1 } })],
    ["waiting_for_user", input({ live: { messages: { unfinishedQuestion: true, ownInjectionIds: [] } } })],
    ["compaction", input({ live: { messages: { compaction: "running", unfinishedQuestion: false, ownInjectionIds: [] }, agent: "build" } })],
    ["compaction", input({ live: { compactedRecently: true, agent: undefined } })],
    ["agent_skipped", input({ live: { agent: "plan" } })],
    ["agent_skipped", input({ live: { agent: "Plan" } })],
    ["no_write_permission", input({ live: { agent: "reader", agentCanWrite: false } })],
    ["todo_fetch_failed", input({ todos: "fetch_failed" })],
    ["no_todos", input({ todos: [] })],
    ["todos_complete", input({ todos: [{ content: "a", status: "completed" }, { content: "b", status: "cancelled" }] })],
    ["todos_complete", input({ todos: [{ content: "a", status: "blocked" }, { content: "b", status: "deleted" }] })],
    [
      "stagnation",
      input({ durable: { todoSnapshot: open.map((t) => ({ ...t })), stagnantContinuations: 2 } }),
    ],
    ["budget_exhausted", input({ durable: { continuations: 20 } })],
  ];
  it.each(cases)("%s", (expected, i) => {
    expect(reason(i)).toBe(expected);
  });

  it("every skip reason of the contract has a guard, in the documented order", () => {
    expect(GUARD_ORDER).toEqual(SKIP_REASONS);
  });

  it("continues when every guard passes, with the todo summary", () => {
    const d = decide(input());
    expect(d).toEqual({ verdict: "continue", summary: { total: 3, completed: 1, open: 2 }, stagnantStreak: 0 });
  });

  it("skip details carry the stage", () => {
    const d = decide(input({ stage: "before_prompt", durable: { stoppedAt: 5 } }));
    expect(d).toMatchObject({ verdict: "skip", reason: "stopped", detail: { stage: "before_prompt", stoppedAt: 5 } });
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

  it("error cooldown lasts exactly errorCooldownMs and ignores abort/token-limit kinds", () => {
    expect(reason(input({ durable: { lastErrorAt: NOW - 3000, lastErrorKind: "other" } }))).toBe("continue");
    expect(reason(input({ durable: { lastErrorAt: NOW - 1, lastErrorKind: "abort" } }))).toBe("continue");
  });

  it("a wall clock that went back does not stretch the error cooldown", () => {
    expect(reason(input({ durable: { lastErrorAt: NOW + 3_600_000, lastErrorKind: "other" } }))).toBe("continue");
  });

  it("backoff only holds back a new idle, not the retry countdown itself", () => {
    const durable = { backoffUntil: NOW + 1000 };
    expect(reason(input({ stage: "idle", durable }))).toBe("backoff");
    expect(reason(input({ stage: "deadline", durable }))).toBe("continue");
    expect(reason(input({ stage: "before_prompt", durable }))).toBe("continue");
  });

  it("a backoff further away than the longest possible backoff is a clock that went back: ignored", () => {
    expect(reason(input({ durable: { backoffUntil: NOW + 3 * 3_600_000 }, config: { retryMaxMs: 60_000 } }))).toBe("continue");
    expect(reason(input({ durable: { backoffUntil: NOW + 59_000 }, config: { retryMaxMs: 60_000 } }))).toBe("backoff");
  });

  it("unknown facts pass (the pre-check before anything is fetched)", () => {
    const d = decide(input({ todos: undefined, live: {} }));
    expect(d).toEqual({ verdict: "continue", summary: undefined, stagnantStreak: 0 });
  });

  it("a compaction that just ran blocks only while the real agent is unknown", () => {
    const facts = { compaction: "just_ran" as const, unfinishedQuestion: false, ownInjectionIds: [] };
    expect(reason(input({ live: { messages: facts, agent: undefined } }))).toBe("compaction");
    expect(reason(input({ live: { messages: facts, agent: "build", agentCanWrite: true } }))).toBe("continue");
  });

  it("budget: maxContinuations since the last real user message", () => {
    expect(reason(input({ durable: { continuations: 19 } }))).toBe("continue");
    expect(reason(input({ durable: { continuations: 2 }, config: { maxContinuations: 2 } }))).toBe("budget_exhausted");
  });
});

describe("stagnation", () => {
  const snapshot = open.map((t) => ({ content: t.content, status: t.status }));

  it("counts continuations in a row after which no status moved", () => {
    expect(stagnantStreak({ durable: { recovering: false, continuations: 1, stagnantContinuations: 0, todoSnapshot: null }, todos: open })).toBe(0);
    expect(stagnantStreak({ durable: { recovering: false, continuations: 1, stagnantContinuations: 0, todoSnapshot: snapshot }, todos: open })).toBe(1);
    expect(stagnantStreak({ durable: { recovering: false, continuations: 3, stagnantContinuations: 2, todoSnapshot: snapshot }, todos: open })).toBe(3);
  });

  it("progress resets the streak", () => {
    const moved = open.map((t) => (t.content === "b" ? { ...t, status: "completed" } : t));
    const d = decide(input({ durable: { todoSnapshot: snapshot, stagnantContinuations: 2 }, todos: moved }));
    expect(d).toMatchObject({ verdict: "continue", stagnantStreak: 0 });
  });

  it("with the default limit of 3, three unproductive continuations are sent, the fourth is refused", () => {
    let durable: DurableFacts = { recovering: false, continuations: 0, stagnantContinuations: 0, todoSnapshot: null };
    let sent = 0;
    for (let i = 0; i < 10; i++) {
      const d = decide(input({ durable }));
      if (d.verdict === "skip") {
        expect(d.reason).toBe("stagnation");
        break;
      }
      sent++;
      durable = { ...durable, continuations: durable.continuations + 1, stagnantContinuations: d.stagnantStreak, todoSnapshot: snapshot };
    }
    expect(sent).toBe(3);
  });
});
