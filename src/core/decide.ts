// The guard chain. Given one session's facts, its todos and the time, say whether to continue and, if not, which
// guard said no. Pure: no I/O, no clock. The engine calls it three times per continuation: when the session goes
// idle (arm or skip), when the countdown ends (hand to the injector or skip), and right before the prompt call
// (after re-fetching the todos). Facts that are not known yet (`undefined`) pass their guard, so the same chain
// serves as a cheap pre-check before anything is fetched.
import type { ErrorKind } from "./errors.js";
import type { MessageFacts } from "./messages.js";
import type { SkipReason } from "./reasons.js";
import { statusProgressed, summarize, type Todo, type TodoSnapshot, type TodoSummary } from "./todos.js";

export type Stage = "idle" | "deadline" | "before_prompt";

export interface DecisionConfig {
  enabled: boolean;
  continueChildSessions: boolean;
  errorCooldownMs: number;
  skipAgents: readonly string[];
  stagnationLimit: number;
  maxContinuations: number;
  /** The longest backoff there can be: a backoff further away than this means the wall clock went back. */
  retryMaxMs?: number;
}

/** What the database remembers about the session. */
export interface DurableFacts {
  parentId?: string | null;
  stoppedAt?: number | null;
  recovering: boolean;
  lastErrorAt?: number | null;
  lastErrorKind?: ErrorKind | string | null;
  abortedAt?: number | null;
  tokenLimitAt?: number | null;
  continuations: number;
  stagnantContinuations: number;
  todoSnapshot?: TodoSnapshot | null;
  backoffUntil?: number | null;
}

/** What this process sees right now (memory mirror of events, and the host when asked). */
export interface LiveFacts {
  /** Another continuation of this session is queued or in flight. */
  inFlight?: boolean;
  status?: "busy" | "idle" | "retry";
  busyChildren?: number;
  /** Questions and permission requests asked and not yet answered. */
  pendingRequests?: number;
  messages?: MessageFacts;
  /** A `session.compacted` arrived since the last real user message. */
  compactedRecently?: boolean;
  /** The agent a continuation would be sent with (that of the latest real message). */
  agent?: string;
  agentCanWrite?: boolean;
}

export interface DecisionInput {
  stage: Stage;
  now: number;
  config: DecisionConfig;
  durable: DurableFacts;
  live: LiveFacts;
  /** `undefined`: not fetched yet (pre-check); `"fetch_failed"`: the host could not say. */
  todos?: readonly Todo[] | "fetch_failed";
}

export type Decision =
  | { verdict: "skip"; reason: SkipReason; detail: Record<string, unknown> }
  | {
      verdict: "continue";
      /** Undefined when the todos were not known yet (a pre-check). */
      summary?: TodoSummary;
      /** Earlier continuations in a row that were followed by no status progress (stored when this one is sent). */
      stagnantStreak: number;
    };

type Guard = (input: DecisionInput) => Record<string, unknown> | undefined;

const pass = undefined;

/**
 * The documented order (README "Guards"): cheap, durable and user-intent guards first, then live host facts, then
 * the todos, then the loop protections that need the todos.
 */
const GUARDS: ReadonlyArray<readonly [SkipReason, Guard]> = [
  ["disabled", ({ config }) => (config.enabled ? pass : {})],
  [
    "session_filtered",
    ({ config, durable }) => (durable.parentId && !config.continueChildSessions ? { parentId: durable.parentId } : pass),
  ],
  ["stopped", ({ durable }) => (durable.stoppedAt != null ? { stoppedAt: durable.stoppedAt } : pass)],
  ["recovering", ({ durable, live }) => (durable.recovering || live.status === "retry" ? {} : pass)],
  [
    "aborted",
    ({ durable, live }) =>
      durable.abortedAt != null
        ? { abortedAt: durable.abortedAt }
        : live.messages?.unansweredErrorKind === "abort"
          ? { source: "last_assistant_message" }
          : pass,
  ],
  [
    "token_limit",
    ({ durable, live }) =>
      durable.tokenLimitAt != null
        ? { tokenLimitAt: durable.tokenLimitAt }
        : live.messages?.unansweredErrorKind === "token_limit"
          ? { source: "last_assistant_message" }
          : pass,
  ],
  [
    "error_cooldown",
    ({ durable, now, config }) => {
      if (durable.lastErrorAt == null || durable.lastErrorKind !== "other") return pass;
      const elapsed = now - durable.lastErrorAt;
      // A negative elapsed time means the wall clock went back: do not let that stretch the cooldown.
      return elapsed >= 0 && elapsed < config.errorCooldownMs ? { remainingMs: config.errorCooldownMs - elapsed } : pass;
    },
  ],
  [
    "backoff",
    // Only a new idle is held back: the retry countdown that the backoff armed is itself the next attempt.
    ({ stage, durable, now, config }) =>
      stage === "idle" &&
      durable.backoffUntil != null &&
      durable.backoffUntil > now &&
      durable.backoffUntil - now <= (config.retryMaxMs ?? Number.POSITIVE_INFINITY)
        ? { remainingMs: durable.backoffUntil - now }
        : pass,
  ],
  ["in_flight", ({ live }) => (live.inFlight ? {} : pass)],
  ["busy", ({ live }) => (live.status === "busy" ? {} : pass)],
  ["children_running", ({ live }) => (live.busyChildren ? { busyChildren: live.busyChildren } : pass)],
  [
    "waiting_for_user",
    ({ live }) =>
      live.pendingRequests
        ? { pendingRequests: live.pendingRequests }
        : live.messages?.unfinishedQuestion
          ? { source: "question_tool" }
          : pass,
  ],
  [
    "compaction",
    ({ live }) => {
      if (live.messages?.compaction === "running") return { state: "running" };
      const justRan = live.messages?.compaction === "just_ran" || live.compactedRecently === true;
      return justRan && !live.agent ? { state: "just_ran", agentKnown: false } : pass;
    },
  ],
  [
    "agent_skipped",
    ({ live, config }) => {
      const agent = live.agent?.toLowerCase();
      return agent && config.skipAgents.some((a) => a.toLowerCase() === agent) ? { agent: live.agent } : pass;
    },
  ],
  ["no_write_permission", ({ live }) => (live.agentCanWrite === false ? { agent: live.agent ?? null } : pass)],
  ["todo_fetch_failed", ({ todos }) => (todos === "fetch_failed" ? {} : pass)],
  ["no_todos", ({ todos }) => (Array.isArray(todos) && todos.length === 0 ? {} : pass)],
  [
    "todos_complete",
    ({ todos }) => {
      if (!Array.isArray(todos)) return pass;
      const summary = summarize(todos);
      return summary.open === 0 ? { total: summary.total, completed: summary.completed } : pass;
    },
  ],
  [
    "stagnation",
    (input) => {
      const streak = stagnantStreak(input);
      return streak !== undefined && streak >= input.config.stagnationLimit
        ? { unproductiveContinuations: streak, limit: input.config.stagnationLimit }
        : pass;
    },
  ],
  [
    "budget_exhausted",
    ({ durable, config }) =>
      durable.continuations >= config.maxContinuations
        ? { continuations: durable.continuations, limit: config.maxContinuations }
        : pass,
  ],
];

export const GUARD_ORDER: readonly SkipReason[] = GUARDS.map(([reason]) => reason);

/**
 * How many continuations in a row produced no status progress, including the last one sent. `undefined` while the
 * todos are unknown; 0 when there is no earlier continuation to compare with or the statuses moved since.
 */
export function stagnantStreak({ durable, todos }: Pick<DecisionInput, "durable" | "todos">): number | undefined {
  if (!Array.isArray(todos)) return undefined;
  if (!durable.todoSnapshot) return 0;
  return statusProgressed(durable.todoSnapshot, todos) ? 0 : durable.stagnantContinuations + 1;
}

export function decide(input: DecisionInput): Decision {
  for (const [reason, guard] of GUARDS) {
    const detail = guard(input);
    if (detail) return { verdict: "skip", reason, detail: { stage: input.stage, ...detail } };
  }
  const todos = Array.isArray(input.todos) ? input.todos : undefined;
  return {
    verdict: "continue",
    summary: todos ? summarize(todos) : undefined,
    stagnantStreak: stagnantStreak(input) ?? 0,
  };
}
