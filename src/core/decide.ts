// The guard chain. Given one session's facts, its todos and the time, say whether to continue and, if not, which
// guard said no. Pure: no I/O, no clock. The engine calls it three times per continuation: twice when the session
// goes idle — a cheap pre-check before anything is fetched (facts not known yet, `undefined`, pass their guard), then
// on OpenCode's answers (arm or skip) — and right before the prompt call, once the countdown ended and OpenCode was
// read again.
import { isRetryableKind } from "./errors.js";
import { turnEndedWellSince, type MessageFacts } from "./messages.js";
import { SKIP_REASONS, type SkipReason } from "./reasons.js";
import type { Decision, DecisionConfig, DecisionInput, DurableFacts, PauseLift, VerificationFact } from "./decision.js";
import { listRewritten, progressSince, summarize, type Todo } from "./todos.js";
import { progressStreaks, unproductiveStreak, type ProgressStreaks } from "./streaks.js";
import { overBudget } from "./budget.js";

type Guard = (input: DecisionInput, derived: Derived) => Record<string, unknown> | undefined;

/** Values several guards and the verdict need, computed once per decision. */
interface Derived {
  /** `unknown` before the todos are read (a pre-check never holds a session on it). */
  pause: "none" | "unknown" | "held" | PauseLift;
  streaks?: ProgressStreaks;
  unproductiveStreak?: number;
  wait?: { until: number; waitingFor: "backoff" | "error_cooldown" };
}

const pass = undefined;

/** The cooldown after the n-th provider error in a row: errorCooldownMs doubled per error, capped; retry-after wins. */
export function errorCooldownMs(
  config: Pick<DecisionConfig, "errorCooldownMs" | "retryMaxMs">,
  streak: number,
  retryAfterMs?: number | null,
): number {
  const exponential = Math.min(config.retryMaxMs, config.errorCooldownMs * 2 ** Math.max(0, streak - 1));
  return Math.max(config.errorCooldownMs, exponential, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
}

/** A provider asking to wait longer than this is asking for a person, not a timer. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** When a new evaluation must wait for a backoff or a cooldown to end (a wall clock gone back is not honoured). */
function waitOf({ durable, now, config }: DecisionInput): Derived["wait"] {
  let wait: Derived["wait"];
  if (durable.lastErrorAt != null && isRetryableKind(durable.lastErrorKind)) {
    const cooldown = errorCooldownMs(config, durable.errorStreak ?? 1, durable.lastErrorRetryAfterMs);
    const until = durable.lastErrorAt + cooldown;
    if (until > now && until - now <= cooldown) wait = { until, waitingFor: "error_cooldown" };
  }
  if (durable.backoffUntil != null && durable.backoffUntil > now && durable.backoffUntil - now <= config.retryMaxMs) {
    if (!wait || durable.backoffUntil > wait.until) wait = { until: durable.backoffUntil, waitingFor: "backoff" };
  }
  return wait;
}

function pauseOf({ durable, config, todos, live }: DecisionInput): Derived["pause"] {
  if (durable.pausedAt == null || !config.pauseAfterUserMessage) return "none";
  if (live.messages?.answersQuestion === true) return "answered_question";
  if (!Array.isArray(todos)) return "unknown";
  const baseline = durable.pauseLedger ?? durable.ledger;
  if (!baseline) return "held";
  if (progressSince(baseline, todos)) return "progress";
  if (listRewritten(baseline, todos)) return "rewritten";
  return "held";
}

/** Each skip reason's guard, written in the order the chain runs them (GUARD_ORDER). */
const GUARDS: { readonly [R in SkipReason]: Guard } = {
  disabled: ({ config }) => (config.enabled ? pass : {}),
  session_filtered: ({ config, durable }) =>
    durable.parentId && !config.continueChildSessions ? { parentId: durable.parentId } : pass,
  stopped: ({ durable: { stoppedAt, stopSource } }) => (stoppedAt != null ? { stoppedAt, stopSource } : pass),
  // The key cancels this idle's countdown; a look at the same idle that was still reading OpenCode yields to it.
  user_key: ({ durable }) => (durable.userCancelledAt != null ? { cancelledAt: durable.userCancelledAt } : pass),
  // A park holds until it wakes: its wake owes the session a look, and the park is over by then.
  parked: ({ durable: { parked }, now }) =>
    parked
      ? { parkId: parked.parkId, park: parked.reason, until: parked.wakeAt, wakesInMs: parked.wakeAt - now }
      : pass,
  recovering: ({ durable, live }) => (durable.recovering || live.status === "retry" ? {} : pass),
  aborted: ({ durable, live }) =>
    durable.abortedAt != null
      ? { abortedAt: durable.abortedAt }
      : live.messages?.unansweredErrorKind === "abort"
        ? { source: "last_assistant_message" }
        : pass,
  token_limit: ({ durable, live }) =>
    durable.tokenLimitAt != null
      ? { tokenLimitAt: durable.tokenLimitAt }
      : live.messages?.unansweredErrorKind === "token_limit"
        ? { source: "last_assistant_message" }
        : pass,
  provider_error: (input) => {
    const { durable, live } = input;
    if (live.messages?.unansweredErrorKind === "permanent" && !resumedSince(durable, live.messages))
      return { source: "last_assistant_message", ...errorDetail(live.messages.unansweredError) };
    return durable.lastErrorKind === "permanent" && lastTurnStillFailed(input)
      ? { lastErrorAt: durable.lastErrorAt ?? null, errorName: durable.lastErrorName ?? null }
      : pass;
  },
  errors_persist: (input) => {
    const { durable, config } = input;
    const streak = durable.errorStreak ?? 0;
    if (streak <= config.maxRetries || !isRetryableKind(durable.lastErrorKind) || !lastTurnStillFailed(input))
      return pass;
    return { errors: streak, limit: config.maxRetries, lastErrorKind: durable.lastErrorKind ?? null };
  },
  // An idle is no reason to try again: every later one would be an attempt beyond the bound.
  gave_up: ({ durable, config }) => {
    const failures = durable.consecutiveFailures ?? 0;
    return failures > config.maxRetries ? { failures, limit: config.maxRetries } : pass;
  },
  // A new idle waits for the cooldown (a countdown armed for its end); a countdown that ends early is held here.
  error_cooldown: ({ stage, now }, { wait }) =>
    stage !== "idle" && wait?.waitingFor === "error_cooldown" ? { remainingMs: wait.until - now } : pass,
  backoff: ({ stage, now }, { wait }) =>
    stage !== "idle" && wait?.waitingFor === "backoff" ? { remainingMs: wait.until - now } : pass,
  in_flight: (input) => {
    const { live, durable } = input;
    if (live.inFlight) return {};
    // A check of the finished list is running: its end decides (passed: done; failed: a continuation).
    if (durable.verification?.state === "running") return { verifying: durable.verification.command };
    if (durable.answeredBy) return { answeredBy: durable.answeredBy.injectionId, firedAt: durable.answeredBy.firedAt };
    const unanswered = unansweredContinuation(input);
    return unanswered ? { unanswered, status: "unread" } : pass;
  },
  busy: ({ live }) => (live.status === "busy" ? {} : pass),
  children_running: ({ live }) =>
    live.busyChildren
      ? {
          busyChildren: live.busyChildren,
          ...(live.busyDescendantIds ? { sessions: live.busyDescendantIds.slice(0, 20) } : {}),
        }
      : pass,
  waiting_for_user: ({ live }) => {
    if (live.pendingRequests) return { source: "request", pendingRequests: live.pendingRequests };
    if (live.messages?.unfinishedQuestion) return { source: "question_tool" };
    if (live.messages?.textQuestion !== undefined)
      return { source: "text_question", question: live.messages.textQuestion };
    return pass;
  },
  compaction: ({ live, config, todos }) => {
    if (live.messages?.compaction === "running") return { state: "running" };
    const finished = live.messages?.compaction === "finished" || live.compactedRecently === true;
    if (!finished) return pass;
    if (!config.continueAfterCompaction) return { state: "finished" };
    // Which agent to continue with is known only once the messages were read (never the compaction agent).
    return todos !== undefined && !live.agent ? { state: "finished", agentKnown: false } : pass;
  },
  agent_skipped: ({ live, config }) => {
    const agent = live.agent?.toLowerCase();
    return agent && config.skipAgents.some((a) => a.toLowerCase() === agent) ? { agent: live.agent } : pass;
  },
  no_write_permission: ({ live }) => (live.agentCanWrite === false ? { agent: live.agent ?? null } : pass),
  todo_fetch_failed: ({ todos }) => (todos === "fetch_failed" ? {} : pass),
  no_todos: ({ todos }) => (Array.isArray(todos) && todos.length === 0 ? {} : pass),
  verify_failed: (input) => {
    const failed = currentVerification(input);
    const limit = input.config.verify?.maxRuns;
    if (!failed || failed.state !== "failed" || limit === undefined || !allClosed(input)) return pass;
    if (failed.failures < limit && !failed.repeated) return pass;
    return {
      ...(failed.repeated ? { repeated: true } : {}),
      failures: failed.failures,
      limit,
      command: failed.command,
      exitCode: failed.exitCode ?? null,
      output: failed.outputTail ?? "",
    };
  },
  // With `verify`, a finished list is done only once its check passed; one that failed is continued (decide below).
  todos_complete: (input) => {
    if (!allClosed(input)) return pass;
    const summary = summarize(input.todos as readonly Todo[]);
    const done = { total: summary.total, completed: summary.completed };
    if (!checkedDone(input)) return done;
    const checked = currentVerification(input);
    if (checked?.state !== "passed") return pass;
    return { ...done, verified: { command: checked.command, durationMs: checked.durationMs ?? null } };
  },
  user_took_over: ({ durable }, { pause }) =>
    pause === "held" ? { messageId: durable.pauseMessageId ?? null, pausedAt: durable.pausedAt ?? null } : pass,
  no_progress_reply: ({ config }, { unproductiveStreak: streak }) =>
    streak !== undefined && streak >= config.unproductiveLimit
      ? { textOnlyReplies: streak, limit: config.unproductiveLimit }
      : pass,
  stagnation: ({ config }, { streaks }) => {
    if (!streaks) return pass;
    const { stagnant, work, progress } = streaks;
    if (stagnant >= config.stagnationLimit)
      return { unproductiveContinuations: stagnant, limit: config.stagnationLimit, workContinuations: work };
    const limit = config.workWithoutProgressLimit;
    if (limit > 0 && work >= limit)
      return {
        work: "files",
        workContinuations: work,
        limit,
        filesChanged: progress?.filesChanged ?? 0,
        unproductiveContinuations: stagnant,
      };
    return pass;
  },
  cost_budget: ({ durable, config }) => overBudget(durable, config),
  budget_exhausted: ({ durable, config }) => {
    const allowed = durable.allowed?.continuations ?? 0;
    const limit = config.maxContinuations + allowed;
    if (durable.continuations < limit) return pass;
    return {
      continuations: durable.continuations,
      limit,
      ...(allowed > 0 ? { allowed } : {}),
      ...(durable.spent && durable.spent.tokens > 0 ? { spent: durable.spent.cost, tokens: durable.spent.tokens } : {}),
    };
  },
};

/** The order the chain runs the guards in: the skip reasons' (reasons.ts). */
export const GUARD_ORDER: readonly SkipReason[] = SKIP_REASONS;

/**
 * Recorded provider errors still count only while the last turn ends in one: a turn that ended well since (seen in
 * the messages) means they are over. A permanent one holds until the messages show such a turn after it, not merely
 * no error: a prompt OpenCode refused after its 204 writes no message (its error comes only as `session.error`
 * events), so the messages then show the turn before the refusal, and it ended well. A transient one's retry is what
 * is wanted, bounded by `gave_up`. Unknown before the facts are read, so a pre-check never stops on them.
 */
function lastTurnStillFailed({ todos, live, durable }: DecisionInput): boolean {
  if (todos === undefined) return false;
  if (live.messages === undefined) return true;
  if (durable.lastErrorKind === "permanent") return !turnEndedWellSince(live.messages, durable.lastErrorAt);
  return live.messages.unansweredErrorKind !== undefined;
}

/**
 * Our last continuation is the session's last user message, nothing answered it yet, and OpenCode did not say whether
 * the session is busy: its turn is running (the usual case, and one this process hears nothing of when another process
 * sent it), or it never started (OpenCode refused it after its 204). Only the status tells them apart, so another
 * continuation now could land on top of a running one. A turn that never started is the start check's to find
 * (`not_started`, then a retry of that very continuation, which is not held here). The id of that continuation, else
 * undefined.
 */
function unansweredContinuation({ live, retrying }: DecisionInput): string | undefined {
  const { messages } = live;
  if (retrying || !live.statusUnread || messages?.replyToLastInjection !== "none") return undefined;
  return messages.ownInjectionIds.at(-1);
}

/** The user resumed after the message that shows the error: they were told to fix it, then resume, and did. */
function resumedSince(durable: DurableFacts, messages: MessageFacts): boolean {
  const { resumedAt } = durable;
  const errorAt = messages.unansweredErrorAt;
  return resumedAt != null && errorAt !== undefined && errorAt <= resumedAt;
}

function errorDetail(error: MessageFacts["unansweredError"]): Record<string, unknown> {
  if (!error) return {};
  return {
    errorName: error.name ?? null,
    statusCode: error.statusCode ?? null,
    message: error.message?.slice(0, 300) ?? null,
  };
}

/** The todos were read and every one of them is closed (an empty list is `no_todos`, before). */
function allClosed({ todos }: DecisionInput): boolean {
  return Array.isArray(todos) && todos.length > 0 && summarize(todos).open === 0;
}

/**
 * A finished list counts as done only once checked: `verify` is set and continuations went out since the last real
 * user message (a list the person watched close is theirs to judge, as for the `done` notice).
 */
function checkedDone({ config, durable }: DecisionInput): boolean {
  return config.verify !== null && durable.continuations > 0;
}

/** The latest check, while it stands for the work as it is: no continuation went out since it started. */
function currentVerification({ durable }: DecisionInput): VerificationFact | undefined {
  const checked = durable.verification;
  return checked && checked.afterContinuations === durable.continuations ? checked : undefined;
}

/** A finished list owed a check: none stands for the work as the last continuation left it. */
function verificationDue(input: DecisionInput): boolean {
  return allClosed(input) && checkedDone(input) && currentVerification(input) === undefined;
}

/** The stops a pre-check decides without the todos that a finished list outranks (todos_complete comes before them). */
const OUTRANKED_BY_DONE: ReadonlySet<SkipReason> = new Set(["cost_budget", "budget_exhausted"]);

/**
 * A pre-check's budget stop when the list last reported has every todo closed: the session is done, not over budget
 * (the last continuation finished the list), and a person told so hears "done". A skip either way: only its reason
 * follows the list.
 */
function finished(input: DecisionInput, reason: SkipReason): Decision | undefined {
  const reported = input.reportedTodos;
  if (input.todos !== undefined || !OUTRANKED_BY_DONE.has(reason) || !reported || reported.length === 0)
    return undefined;
  const summary = summarize(reported);
  if (summary.open > 0) return undefined;
  const detail = { stage: input.stage, total: summary.total, completed: summary.completed, reported: true };
  return { verdict: "skip", reason: "todos_complete", detail };
}

export function decide(input: DecisionInput): Decision {
  const derived: Derived = {
    pause: pauseOf(input),
    streaks: progressStreaks(input),
    unproductiveStreak: unproductiveStreak(input),
    wait: waitOf(input),
  };
  for (const reason of GUARD_ORDER) {
    // A finished list owed a check is checked where it would otherwise be called done: a check costs no token, so the
    // loop protections and budgets after it judge only the continuation a failed check asks for.
    if (reason === "todos_complete" && verificationDue(input)) return verifyVerdict(input);
    const detail = GUARDS[reason](input, derived);
    if (detail)
      return finished(input, reason) ?? { verdict: "skip", reason, detail: { stage: input.stage, ...detail } };
  }
  const todos = Array.isArray(input.todos) ? input.todos : undefined;
  const messages = input.live.messages;
  const decision: Decision = {
    verdict: "continue",
    summary: todos ? summarize(todos) : undefined,
    stagnantStreak: derived.streaks?.stagnant ?? 0,
    workStreak: derived.streaks?.work ?? input.durable.workContinuations ?? 0,
    unproductiveStreak: derived.unproductiveStreak ?? input.durable.unproductiveReplies ?? 0,
  };
  if (derived.streaks?.progress) decision.progress = derived.streaks.progress;
  const checked = currentVerification(input);
  if (checked?.state === "failed" && allClosed(input)) decision.checkFailed = checked;
  if (derived.wait && input.stage === "idle") {
    decision.notBefore = derived.wait.until;
    decision.waitingFor = derived.wait.waitingFor;
  }
  if (derived.pause !== "none" && derived.pause !== "held" && derived.pause !== "unknown")
    decision.pauseLifted = derived.pause;
  // A limit counts in no streak (its park waits it out), but it too is over once a turn ends well.
  const errorsRecorded = (input.durable.errorStreak ?? 0) > 0 || input.durable.lastErrorKind === "limit";
  if (errorsRecorded && messages !== undefined && messages.unansweredErrorKind === undefined)
    decision.errorsResolved = true;
  return decision;
}

function verifyVerdict(input: DecisionInput): Decision {
  const summary = summarize(input.todos as readonly Todo[]);
  const command = input.config.verify!.command;
  return { verdict: "verify", command, summary, detail: { stage: input.stage, command, total: summary.total } };
}
