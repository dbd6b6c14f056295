// What the guard chain is given, put together the same way at each of the three moments a continuation is decided
// (the idle, the deadline, right before the prompt): the session's durable row, what this process saw of it in events,
// and what OpenCode answered when asked. Pure.
import type {
  DecisionConfig,
  DecisionInput,
  Decision,
  DurableFacts,
  LiveFacts,
  ParkFact,
  VerificationFact,
  Progress,
  Stage,
} from "./decision.js";
import type { SessionStatus } from "./events.js";
import type { AgentChoice, MessageFacts } from "./messages.js";
import { isOpen, parseLedger, type Todo } from "./todos.js";
import { parseFileLedger } from "./work.js";
import type { Bill } from "./bill.js";
import type { Usage } from "./fields.js";
import { afterErrorsResolved, agentColumns, liftPause, type SessionPatch } from "./transitions.js";

/** The durable columns the guards read (a `sessions` row has them all). */
export interface SessionState {
  parentId: string | null;
  stoppedAt: number | null;
  stopSource: string | null;
  recoveringSince: number | null;
  lastErrorAt: number | null;
  lastErrorKind: string | null;
  lastErrorName: string | null;
  errorStreak: number;
  lastErrorRetryAfterMs: number | null;
  abortedAt: number | null;
  tokenLimitAt: number | null;
  continuations: number;
  stagnantContinuations: number;
  workContinuations: number;
  fileLedger: string | null;
  continuationCost: number;
  continuationTokens: number;
  allowedContinuations: number;
  allowedCost: number;
  allowedTokens: number;
  unproductiveReplies: number;
  todoSnapshot: string | null;
  backoffUntil: number | null;
  consecutiveFailures: number;
  pausedAt: number | null;
  resumedAt: number | null;
  pauseMessageId: string | null;
  pauseBaseline: string | null;
  agent: string | null;
  modelProvider: string | null;
  modelId: string | null;
  variant: string | null;
}

/** What this process saw of the session in its events. */
export interface SessionSightings {
  status?: SessionStatus;
  parentId?: string | null;
  pendingRequests: number;
  compactedRecently: boolean;
  /** The todos of the latest `todo.updated`. */
  todos?: readonly Todo[];
}

/** What OpenCode answered when asked (all reads bounded; a read that failed leaves its fact out). */
export interface HostFacts {
  todos: Todo[] | "fetch_failed";
  todoError?: string;
  messages?: MessageFacts;
  parentId?: string | null;
  /** The session's own status as OpenCode reports it (`idle` when absent from the status map). */
  status?: SessionStatus;
  /** Busy sessions below this one: children, grandchildren and deeper. */
  busyDescendants?: string[];
  agents?: Array<{ name: string; canWrite?: boolean }>;
  /** The turn that answered the session's last continuation among the messages read, and its bill. */
  lastTurn?: { injectionId: string; messageId: string; bill: Bill };
  /** The whole session's spend, as OpenCode reported it. */
  sessionSpend?: Usage;
}

export interface DecisionContext {
  stage: Stage;
  now: number;
  config: DecisionConfig;
  row?: SessionState;
  seen: SessionSightings;
  /** Undefined before OpenCode was asked (the pre-check at an idle, the deadline). */
  facts?: HostFacts;
  /** Another continuation of the session is queued, in flight, or recorded `pending`. */
  inFlight: boolean;
  /** The continuation decided re-sends one fired and never answered (DecisionInput's `retrying`). */
  retrying?: boolean;
  /** When a person cancelled the session's countdown with the key since the look began, if they did. */
  userCancelledAt?: number;
  /** A continuation of the session fired (by any process) since the idle the look judges was seen, if one was. */
  answeredBy?: { injectionId: string; firedAt: number };
  /** The session's park, when one holds (read with the row: a park lives in a table of its own). */
  parked?: ParkFact;
  /** The session's latest check of a finished list, when `verify` is set and one counts. */
  verification?: VerificationFact;
  /** What the budgets need beyond the row, read only when one is set: today's spend, the latest bills. */
  spending?: {
    today?: number;
    recentBills: ReadonlyArray<{ cost: number; tokens: number }>;
    recentBillsToday?: ReadonlyArray<{ cost: number; tokens: number }>;
  };
}

export function decisionInput(context: DecisionContext): DecisionInput {
  const { stage, now, config, row, seen, facts, inFlight } = context;
  const chosen = agentChoice(row, facts);
  const agentCanWrite = chosen.writeDenied
    ? false
    : chosen.agent
      ? facts?.agents?.find((a) => a.name === chosen.agent)?.canWrite
      : undefined;
  const live: LiveFacts = {
    inFlight,
    // OpenCode's answer beats memory when it says the session is working: another process (or a missed event) may
    // have set it going since this process last heard of it.
    status: facts?.status === "busy" || facts?.status === "retry" ? facts.status : (seen.status ?? facts?.status),
    ...(facts && facts.status === undefined ? { statusUnread: true } : {}),
    busyChildren: facts?.busyDescendants?.length,
    busyDescendantIds: facts?.busyDescendants,
    pendingRequests: seen.pendingRequests,
    messages: facts?.messages,
    compactedRecently: seen.compactedRecently,
    agent: chosen.agent,
    agentCanWrite,
  };
  const todos = judgedTodos(stage, seen, facts);
  const durable = durableFacts(row, seen, facts, context);
  return {
    stage,
    now,
    config,
    durable,
    live,
    todos,
    ...(seen.todos ? { reportedTodos: seen.todos } : {}),
    ...(context.retrying ? { retrying: true } : {}),
  };
}

/**
 * An idle's pre-check judges no todos (it passes the todo guards); the deadline the list events reported; once
 * OpenCode was asked, its answer. Right before the prompt, a list known at the deadline with every todo closed (a
 * `todo.updated` during the wait) ends the countdown all the same, as the deadline's own run of the guards did before
 * it went (docs/architecture.md). A failed read is passed on as such.
 */
function judgedTodos(stage: Stage, seen: SessionSightings, facts: HostFacts | undefined): DecisionInput["todos"] {
  if (!facts) return stage === "deadline" ? seen.todos : undefined;
  const closedMeanwhile = stage === "before_prompt" && seen.todos !== undefined && !seen.todos.some(isOpen);
  return closedMeanwhile && Array.isArray(facts.todos) ? seen.todos : facts.todos;
}

function durableFacts(
  row: SessionState | undefined,
  seen: SessionSightings,
  facts: HostFacts | undefined,
  sinceLook: Pick<DecisionContext, "userCancelledAt" | "answeredBy" | "parked" | "verification" | "spending">,
): DurableFacts {
  return {
    parentId: row?.parentId ?? seen.parentId ?? facts?.parentId ?? null,
    stoppedAt: row?.stoppedAt ?? null,
    stopSource: row?.stopSource ?? null,
    userCancelledAt: sinceLook.userCancelledAt ?? null,
    answeredBy: sinceLook.answeredBy ?? null,
    parked: sinceLook.parked ?? null,
    verification: sinceLook.verification ?? null,
    recovering: row?.recoveringSince != null,
    lastErrorAt: row?.lastErrorAt ?? null,
    lastErrorKind: row?.lastErrorKind ?? null,
    lastErrorName: row?.lastErrorName ?? null,
    errorStreak: row?.errorStreak ?? 0,
    lastErrorRetryAfterMs: row?.lastErrorRetryAfterMs ?? null,
    abortedAt: row?.abortedAt ?? null,
    tokenLimitAt: row?.tokenLimitAt ?? null,
    continuations: row?.continuations ?? 0,
    stagnantContinuations: row?.stagnantContinuations ?? 0,
    workContinuations: row?.workContinuations ?? 0,
    fileLedger: parseFileLedger(row?.fileLedger),
    spent: { cost: row?.continuationCost ?? 0, tokens: row?.continuationTokens ?? 0 },
    spentToday: sinceLook.spending?.today,
    recentBills: sinceLook.spending?.recentBills,
    recentBillsToday: sinceLook.spending?.recentBillsToday,
    allowed: {
      continuations: row?.allowedContinuations ?? 0,
      cost: row?.allowedCost ?? 0,
      tokens: row?.allowedTokens ?? 0,
    },
    unproductiveReplies: row?.unproductiveReplies ?? 0,
    ledger: parseLedger(row?.todoSnapshot),
    backoffUntil: row?.backoffUntil ?? null,
    consecutiveFailures: row?.consecutiveFailures ?? 0,
    pausedAt: row?.pausedAt ?? null,
    resumedAt: row?.resumedAt ?? null,
    pauseMessageId: row?.pauseMessageId ?? null,
    pauseLedger: parseLedger(row?.pauseBaseline),
  };
}

/** The agent and model of the latest real message: from the messages when read, else as last recorded. */
export function agentChoice(row: SessionState | undefined, facts: HostFacts | undefined): AgentChoice {
  const latest = facts?.messages?.latestReal;
  if (latest && (latest.agent || latest.modelId)) return latest;
  return {
    agent: row?.agent ?? undefined,
    providerId: row?.modelProvider ?? undefined,
    modelId: row?.modelId ?? undefined,
    variant: row?.variant ?? undefined,
  };
}

/** Session columns that go with arming: the agent seen, a pause that lifted, errors that are over. */
export function armPatch(decision: Extract<Decision, { verdict: "continue" }>, facts: HostFacts): SessionPatch {
  const latest = facts.messages?.latestReal;
  return {
    ...(latest ? agentColumns(latest) : {}),
    ...(decision.pauseLifted ? liftPause() : {}),
    ...(decision.errorsResolved ? afterErrorsResolved() : {}),
  };
}

/** What the turn before counted as, and the work count against its limit: each continuation says what it saw. */
export function progressDetail(
  decision: { workStreak: number; progress?: Progress },
  limit: number,
): Record<string, unknown> {
  if (!decision.progress) return {};
  return { progress: decision.progress, work: { continuations: decision.workStreak, limit } };
}
