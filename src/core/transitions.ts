// How the durable session state changes on each kind of fact. Pure: returns the columns to write.
import type { ErrorKind } from "./errors.js";
import type { AgentChoice } from "./messages.js";
import { snapshotOf, type Todo } from "./todos.js";

export interface SessionPatch {
  stoppedAt?: number | null;
  stopSource?: string | null;
  recoveringSince?: number | null;
  lastErrorAt?: number | null;
  lastErrorName?: string | null;
  lastErrorKind?: string | null;
  abortedAt?: number | null;
  tokenLimitAt?: number | null;
  continuations?: number;
  stagnantContinuations?: number;
  todoSnapshot?: string | null;
  consecutiveFailures?: number;
  backoffUntil?: number | null;
  lastUserMessageAt?: number | null;
  agent?: string | null;
  modelProvider?: string | null;
  modelId?: string | null;
  variant?: string | null;
}

/** A person stepped in: every block that waits for "the user acted" lifts, and the loop protections start over. */
export function afterRealUserMessage(now: number, choice: AgentChoice): SessionPatch {
  return {
    lastUserMessageAt: now,
    lastErrorAt: null,
    lastErrorName: null,
    lastErrorKind: null,
    abortedAt: null,
    tokenLimitAt: null,
    continuations: 0,
    stagnantContinuations: 0,
    todoSnapshot: null,
    consecutiveFailures: 0,
    backoffUntil: null,
    ...agentColumns(choice),
  };
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

export function afterSessionError(kind: ErrorKind, name: string | undefined, now: number): SessionPatch {
  const patch: SessionPatch = { lastErrorAt: now, lastErrorName: name ?? null, lastErrorKind: kind };
  if (kind === "abort") {
    // An abort is the user's word, not a failure: it must not pile up into a permanent pause.
    patch.abortedAt = now;
    patch.consecutiveFailures = 0;
    patch.backoffUntil = null;
  }
  if (kind === "token_limit") patch.tokenLimitAt = now;
  return patch;
}

/** New assistant output after an abort means the session moved on. */
export function afterAssistantResumed(): SessionPatch {
  return { abortedAt: null };
}

export function afterInjectionSent(todos: readonly Todo[], stagnantStreak: number, continuationsBefore: number): SessionPatch {
  return {
    continuations: continuationsBefore + 1,
    stagnantContinuations: stagnantStreak,
    todoSnapshot: JSON.stringify(snapshotOf(todos)),
    consecutiveFailures: 0,
    backoffUntil: null,
  };
}

export interface RetryPolicy {
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

export type FailureOutcome =
  | { retry: true; attempt: number; delayMs: number; patch: SessionPatch }
  | { retry: false; attempt: number; patch: SessionPatch };

/** Exponential backoff: base, 2×base, 4×base… capped, and at most `maxRetries` retries after the first failure. */
export function afterInjectionFailed(failuresBefore: number, now: number, policy: RetryPolicy): FailureOutcome {
  const failures = failuresBefore + 1;
  if (failures > policy.maxRetries) {
    return { retry: false, attempt: failures, patch: { consecutiveFailures: failures, backoffUntil: null } };
  }
  const delayMs = Math.min(policy.retryMaxMs, policy.retryBaseMs * 2 ** (failures - 1));
  return { retry: true, attempt: failures, delayMs, patch: { consecutiveFailures: failures, backoffUntil: now + delayMs } };
}

export function parseSnapshot(text: string | null | undefined): Array<{ content: string; status: string }> | null {
  if (!text) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? (parsed as Array<{ content: string; status: string }>) : null;
  } catch {
    return null;
  }
}
