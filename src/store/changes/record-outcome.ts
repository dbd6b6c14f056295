// What became of a continuation, recorded: every outcome — the prompt call answered, failed, or left it uncertain; a
// `pending` row left by a process that died, found in the session or not; an uncertain one found after all; one sent
// whose turn never started — moves the injection's status (once: of two writers, one does), and writes, from the
// session row read in the same transaction, the loop counts, the failure count with its retry plan, and the audit row
// that explains it. This file is the only place those are built.
import { retryAfter, retryDetail } from "../../core/injection-outcome.js";
import type { AuditEntry } from "../../core/reasons.js";
import { afterContinuationOut, type RetryPlan, type RetryPolicy } from "../../core/transitions.js";
import { auditRow } from "../audit-row.js";
import type { SessionRow } from "../schema.js";
import { change, q, type Change, type Script } from "../script.js";
import type { InjectionRef, SessionUpdate } from "../types.js";
import { TAKE, withLook, type LookOwed } from "./look-owed.js";
import { ensureSession, patchSession } from "./session-row.js";

/** The injection an outcome is about, as much as its recording needs. */
export type OutcomeOf = InjectionRef & { countdownId?: string; onSent?: string | null; owner?: string | null };

export type Outcome =
  /** The call answered, or its message was found in the session after a failure (`detail` says how). */
  | { kind: "sent"; latencyMs: number; detail: Record<string, unknown> }
  /** The call failed and it certainly did not arrive. `final`: retrying cannot help (a full context). */
  | { kind: "failed"; error: string; final: boolean; detail: Record<string, unknown> }
  /** The call failed and it may have arrived: counted as a continuation and as an attempt. */
  | { kind: "unknown"; error: string; timedOut: boolean; final: boolean; detail: Record<string, unknown> }
  /**
   * A `pending` one whose outcome was never written (its process died, or the database stopped under the call): found
   * in the session, or not (then `unknown`, and an attempt). `firedAt`: when it went out.
   */
  | { kind: "reconciled"; found: boolean; firedAt: number }
  /** A `failed` or `unknown` one found in the session after all. */
  | { kind: "arrived"; was: "failed" | "unknown" }
  /** Sent, and OpenCode never started its turn. */
  | { kind: "not_started"; waitedMs: number };

export interface OutcomePolicy extends RetryPolicy {
  startTimeoutMs: number;
}

/** What a recorded outcome asks of the engine: another attempt, or none. */
export interface Recorded {
  next?: RetryPlan;
}

interface Settlement {
  patch: SessionUpdate;
  /** What the outcome does to the look owed: a sent one's start is checked by then; one that never started is over. */
  look?: LookOwed;
  entry: AuditEntry;
  next?: RetryPlan;
}

const NOT_FOUND = "not found in the session after a restart";

function settle(o: Outcome, of: OutcomeOf, row: SessionRow, now: number, policy: OutcomePolicy): Settlement {
  const counted = () => afterContinuationOut(of.onSent, row.continuations);
  const injectionId = of.id;
  switch (o.kind) {
    case "sent":
      return {
        patch: counted(),
        look: { owe: now + policy.startTimeoutMs },
        entry: { event: "injected", detail: { injectionId, latencyMs: Math.round(o.latencyMs), ...o.detail } },
      };
    case "failed":
    case "unknown": {
      const { next, patch } = retryAfter(row.consecutiveFailures, now, policy, o.final);
      const reason = o.kind === "unknown" && o.timedOut ? "timeout" : next.retry ? "retrying" : "gave_up";
      const tokenLimit = o.final && o.kind === "failed";
      const detail = {
        injectionId,
        error: o.error,
        ...o.detail,
        ...retryDetail(next),
        ...(tokenLimit ? { tokenLimit } : {}),
      };
      // Possibly delivered: it counts as a continuation (budget, ledger) as well as an attempt.
      const counts = o.kind === "unknown" ? counted() : tokenLimit ? { tokenLimitAt: now } : {};
      return { next, patch: { ...counts, ...patch }, entry: { event: "injection_failed", reason, detail } };
    }
    case "reconciled": {
      const detail = { injectionId, countdownId: of.countdownId ?? null, owner: of.owner ?? null };
      // Found: its turn's idle may have come and been skipped while the row was pending, so the session is looked at
      // again once the turn had time to start (a look then also finds a turn that never started).
      if (o.found) {
        const look = { owe: Math.max(now, o.firedAt + policy.startTimeoutMs) };
        return { patch: counted(), look, entry: { event: "reconciled", reason: "found", detail } };
      }
      const { next, patch } = retryAfter(row.consecutiveFailures, now, policy);
      const entry = { event: "reconciled", reason: "not_found", detail: { ...detail, ...retryDetail(next) } } as const;
      return { next, patch: { ...counted(), ...patch }, entry };
    }
    case "arrived":
      return {
        // An `unknown` one was already counted as a continuation; a `failed` one was not.
        patch: { ...(o.was === "failed" ? counted() : {}), consecutiveFailures: 0, backoffUntil: null },
        entry: {
          event: "reconciled",
          reason: "found",
          detail: { injectionId, countdownId: of.countdownId ?? null, was: o.was },
        },
      };
    case "not_started": {
      const { next, patch } = retryAfter(row.consecutiveFailures, now, policy);
      const detail = { injectionId, waitedMs: Math.round(o.waitedMs), ...retryDetail(next) };
      return {
        next,
        patch,
        look: TAKE,
        entry: { event: "injection_failed", reason: "not_started", detail },
      };
    }
  }
}

/** Moves the injection's status for `o`; false when another writer moved it first. */
function* moveStatus(o: Outcome, of: OutcomeOf, now: number): Script<boolean> {
  switch (o.kind) {
    case "sent":
      return yield* q.finishInjection(of.id, "sent", null, now);
    case "failed":
    case "unknown":
      return yield* q.finishInjection(of.id, o.kind, o.error, now);
    case "reconciled":
      return yield* q.finishInjection(of.id, o.found ? "sent" : "unknown", o.found ? null : NOT_FOUND, now);
    case "arrived":
      return yield* q.confirmInjection(of.id, now);
    case "not_started":
      return true;
  }
}

/** Records `outcome`; undefined when it had been recorded already (by this process or another). */
export function recordOutcome(
  of: OutcomeOf,
  outcome: Outcome,
  now: number,
  policy: OutcomePolicy,
): Change<Recorded | undefined> {
  return change("record-outcome", of.sessionId, function* () {
    if (!(yield* moveStatus(outcome, of, now))) return undefined;
    const row = yield* ensureSession(of, now);
    const { patch, look, entry, next } = settle(outcome, of, row, now, policy);
    yield* patchSession(look ? withLook(row, look) : row, patch, now);
    yield* q.audit(auditRow(now, of, entry));
    return { next };
  });
}
