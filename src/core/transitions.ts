// How the durable session state changes on each kind of fact. Pure: returns the columns to write.
import type { ErrorKind, ErrorReport } from "./errors.js";
import { isRetryableKind } from "./errors.js";
import type { AgentChoice } from "./messages.js";
import { mergeLedger, serializeLedger, type ProgressLedger, type Todo } from "./todos.js";
import { mergeFileLedger, serializeFileLedger, type FileLedger, type TurnFiles } from "./work.js";

export interface SessionPatch {
  stoppedAt?: number | null;
  stopSource?: string | null;
  recoveringSince?: number | null;
  lastErrorAt?: number | null;
  lastErrorName?: string | null;
  lastErrorKind?: string | null;
  lastErrorRetryAfterMs?: number | null;
  errorStreak?: number;
  abortedAt?: number | null;
  tokenLimitAt?: number | null;
  continuations?: number;
  stagnantContinuations?: number;
  workContinuations?: number;
  /** JSON of the file ledger (see core/work.ts). */
  fileLedger?: string | null;
  /** What the session's continuations cost since the last real user message or resume. */
  continuationCost?: number;
  continuationTokens?: number;
  /** Granted beyond the caps by `todo-continuation allow` since the last real user message or resume. */
  allowedContinuations?: number;
  allowedCost?: number;
  allowedTokens?: number;
  unproductiveReplies?: number;
  /** JSON of the progress ledger (see core/todos.ts). */
  todoSnapshot?: string | null;
  consecutiveFailures?: number;
  backoffUntil?: number | null;
  lastUserMessageAt?: number | null;
  pausedAt?: number | null;
  pauseMessageId?: string | null;
  pauseBaseline?: string | null;
  resumedAt?: number | null;
  notifiedStop?: string | null;
  /** JSON of the WakeCause (core/wake-note.ts) the next continuation carries. */
  wakeNote?: string | null;
  agent?: string | null;
  modelProvider?: string | null;
  modelId?: string | null;
  variant?: string | null;
}

/**
 * Everything a fresh start clears: the loop protections, the failure and error counts, and what was allowed beyond the
 * budgets (an allowance is for the stretch the budgets count, which starts over here).
 */
const FRESH_START: SessionPatch = {
  notifiedStop: null,
  lastErrorAt: null,
  lastErrorName: null,
  lastErrorKind: null,
  lastErrorRetryAfterMs: null,
  errorStreak: 0,
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
  consecutiveFailures: 0,
  backoffUntil: null,
  wakeNote: null,
};

/**
 * A person stepped in: every block that waits for "the user acted" lifts, and the loop protections start over.
 * When the message follows one of our continuations (`takeover`), the session pauses until its todos progress
 * beyond `takeover.baseline`, its list is rewritten, or the user resumes.
 */
export function afterRealUserMessage(
  now: number,
  choice: AgentChoice,
  takeover?: { messageId: string; baseline: ProgressLedger | null },
): SessionPatch {
  return {
    ...FRESH_START,
    lastUserMessageAt: now,
    abortedAt: null,
    tokenLimitAt: null,
    ...(takeover
      ? {
          pausedAt: now,
          pauseMessageId: takeover.messageId,
          pauseBaseline: takeover.baseline ? serializeLedger(takeover.baseline) : null,
        }
      : {}),
    ...agentColumns(choice),
  };
}

/**
 * /resume-continuation, the CLI, the TUI or the API: the stop and the takeover pause lift, the counts start over, and
 * an error the session's messages still show from before `now` no longer holds it.
 */
export function afterExplicitResume(now: number): SessionPatch {
  return { ...FRESH_START, stoppedAt: null, stopSource: null, ...liftPause(), resumedAt: now };
}

export function liftPause(): SessionPatch {
  return { pausedAt: null, pauseMessageId: null, pauseBaseline: null };
}

export function agentColumns(choice: AgentChoice): SessionPatch {
  const patch: SessionPatch = {};
  if (choice.agent) patch.agent = choice.agent;
  if (choice.providerId && choice.modelId) {
    patch.modelProvider = choice.providerId;
    patch.modelId = choice.modelId;
    patch.variant = choice.variant ?? null;
  }
  return patch;
}

/** Errors this close together belong to one turn (OpenCode reports some failures twice: the cause, then a wrapper). */
const SAME_TURN_MS = 1000;
/** Which error of a turn tells the most: the one retrying cannot fix beats a generic one. */
const SEVERITY: Record<string, number> = { other: 0, transient: 1, limit: 1, abort: 2, permanent: 3, token_limit: 4 };

export function afterSessionError(
  kind: ErrorKind,
  report: ErrorReport,
  now: number,
  previous: { errorStreak: number; lastErrorAt?: number | null; lastErrorKind?: string | null },
): SessionPatch {
  const sameTurn =
    previous.lastErrorAt != null && now - previous.lastErrorAt >= 0 && now - previous.lastErrorAt < SAME_TURN_MS;
  if (sameTurn && (SEVERITY[previous.lastErrorKind ?? ""] ?? 0) > SEVERITY[kind]!) return { lastErrorAt: now };
  const patch: SessionPatch = {
    lastErrorAt: now,
    lastErrorName: report.name ?? null,
    lastErrorKind: kind,
    lastErrorRetryAfterMs: report.retryAfterMs ?? null,
  };
  if (isRetryableKind(kind) && !sameTurn) patch.errorStreak = previous.errorStreak + 1;
  if (kind === "abort") {
    // An abort is the user's word, not a failure: it must not pile up into a permanent pause.
    patch.abortedAt = now;
    patch.consecutiveFailures = 0;
    patch.backoffUntil = null;
  }
  if (kind === "token_limit") patch.tokenLimitAt = now;
  return patch;
}

/** A turn ended without an error after earlier provider errors: the errors are over. */
export function afterErrorsResolved(): SessionPatch {
  return { lastErrorAt: null, lastErrorName: null, lastErrorKind: null, lastErrorRetryAfterMs: null, errorStreak: 0 };
}

/** New assistant output after an abort means the session moved on. */
export function afterAssistantResumed(): SessionPatch {
  return { abortedAt: null };
}

/**
 * What a continuation changes once it is known to have gone out (sent, found after a crash, or outcome unknown): the
 * loop counts and the progress ledger. Absolute values, so it can be stored with the injection and applied later;
 * `continuations` is incremented where it is applied.
 */
export function continuationPatch(o: {
  ledger: ProgressLedger | null;
  todos: readonly Todo[];
  fileLedger: FileLedger | null;
  /** The files the turn this continuation answers touched: the next turn is judged against them too. */
  turnFiles: TurnFiles | undefined;
  stagnantStreak: number;
  workStreak: number;
  unproductiveStreak: number;
}): SessionPatch {
  return {
    stagnantContinuations: o.stagnantStreak,
    workContinuations: o.workStreak,
    unproductiveReplies: o.unproductiveStreak,
    todoSnapshot: serializeLedger(mergeLedger(o.ledger ?? { closedHigh: 0, ranks: {} }, o.todos)),
    fileLedger: serializeFileLedger(mergeFileLedger(o.fileLedger, o.turnFiles)),
    backoffUntil: null,
    // The session is moving again: the next stop is news.
    notifiedStop: null,
    // The continuation said why the session was woken: the ones after it have nothing to explain.
    wakeNote: null,
  };
}

export function parsePatch(text: string | null | undefined): SessionPatch {
  if (!text) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as SessionPatch) : {};
  } catch {
    return {};
  }
}

export interface RetryPolicy {
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

/** What to do after a failed attempt: try again after `delayMs`, or nothing more. */
export type RetryPlan = { retry: true; attempt: number; delayMs: number } | { retry: false; attempt: number };

/** base, 2×base, 4×base… capped: the wait before the `failures`-th retry in a row. */
function backoffMs(failures: number, policy: RetryPolicy): number {
  return Math.min(policy.retryMaxMs, policy.retryBaseMs * 2 ** (failures - 1));
}

/**
 * After a todo read that failed or did not answer (a slow or failing OpenCode): without the list there is nothing to
 * judge, and no idle will come to look again, so look again with the prompt's backoff, at most `maxRetries` times in
 * a row. A read that answers ends the run.
 */
export function afterTodoReadFailed(failuresBefore: number, policy: RetryPolicy): RetryPlan {
  const failures = failuresBefore + 1;
  if (failures > policy.maxRetries) return { retry: false, attempt: failures };
  return { retry: true, attempt: failures, delayMs: backoffMs(failures, policy) };
}

export type FailureOutcome =
  | { retry: true; attempt: number; delayMs: number; patch: SessionPatch }
  | { retry: false; attempt: number; patch: SessionPatch };

/**
 * After a prompt that failed, whose outcome is unknown, or whose turn never started: exponential backoff (base,
 * 2×base, 4×base… capped), at most `maxRetries` retries in a row; every attempt counts. A failure that retrying
 * cannot fix (`final`: a context that is full) gives up at once.
 */
export function afterInjectionFailed(
  failuresBefore: number,
  now: number,
  policy: RetryPolicy,
  final = false,
): FailureOutcome {
  const failures = failuresBefore + 1;
  if (final || failures > policy.maxRetries) {
    return { retry: false, attempt: failures, patch: { consecutiveFailures: failures, backoffUntil: null } };
  }
  const delayMs = backoffMs(failures, policy);
  return {
    retry: true,
    attempt: failures,
    delayMs,
    patch: { consecutiveFailures: failures, backoffUntil: now + delayMs },
  };
}

/** The continuation's turn started: the failures in a row are over. */
export function afterStartConfirmed(): SessionPatch {
  return { consecutiveFailures: 0 };
}

/** The session columns a continuation sets once known to have gone out: its stored counts, and one more continuation. */
export function afterContinuationOut(onSent: string | null | undefined, continuationsBefore: number): SessionPatch {
  return { ...parsePatch(onSent), continuations: continuationsBefore + 1 };
}
