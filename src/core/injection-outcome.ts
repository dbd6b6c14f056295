// What becomes of a continuation whose prompt call failed. Pure: the engine says how the call failed and what it found
// when it looked for the message in the session; this says what to record and whether (and when) to try again.
import { classifyError } from "./errors.js";
import type { InjectionFailureReason } from "./reasons.js";
import { afterInjectionFailed, type RetryPlan, type RetryPolicy, type SessionPatch } from "./transitions.js";

export interface CallFailure {
  message: string;
  /** The call did not answer within the prompt timeout. */
  timeout: boolean;
  /** OpenCode may have carried it out anyway (a timeout, a reset connection, a 5xx; not a 4xx refusal). */
  mayHaveBeenDelivered: boolean;
}

/** What looking for the message in the session found: not looked for, there, not there, or the session unreadable. */
export type Lookup = "not_looked" | "found" | "not_found" | "unreadable";

export type FailureVerdict =
  /** It arrived after all: a continuation like any other, with how it was found out. */
  | { status: "sent"; detail: { afterTimeout: true } | { afterError: string } }
  /** It may still arrive: it counts as sent (budget, ledger) and as an attempt; a retry looks for it first. */
  | { status: "unknown"; reason: Extract<InjectionFailureReason, "timeout" | "retrying">; final: boolean }
  /** Certainly not delivered. */
  | { status: "failed"; final: boolean };

/** Whether to look for the message in the session before anything is recorded. */
export function mustLookUp(failure: CallFailure): boolean {
  return failure.mayHaveBeenDelivered;
}

export function verdictAfterFailure(failure: CallFailure, lookup: Lookup): FailureVerdict {
  // A full context is not fixed by sending again.
  const final = classifyError({ message: failure.message }) === "token_limit";
  if (lookup === "found")
    return { status: "sent", detail: failure.timeout ? { afterTimeout: true } : { afterError: failure.message } };
  if (lookup === "unreadable" || (lookup === "not_found" && failure.timeout))
    return { status: "unknown", reason: failure.timeout ? "timeout" : "retrying", final };
  return { status: "failed", final };
}

export type { RetryPlan } from "./transitions.js";

/** The retry policy applied to the failure count read in the transaction that records the failure. */
export function retryAfter(
  failuresBefore: number,
  now: number,
  policy: RetryPolicy,
  final = false,
): { next: RetryPlan; patch: SessionPatch } {
  const outcome = afterInjectionFailed(failuresBefore, now, policy, final);
  const next: RetryPlan = outcome.retry
    ? { retry: true, attempt: outcome.attempt, delayMs: outcome.delayMs }
    : { retry: false, attempt: outcome.attempt };
  return { next, patch: outcome.patch };
}

/** How a plan reads in an audit row's detail. */
export function retryDetail(next: RetryPlan): Record<string, unknown> {
  return next.retry ? { attempt: next.attempt, retryInMs: next.delayMs } : { attempt: next.attempt, final: true };
}
