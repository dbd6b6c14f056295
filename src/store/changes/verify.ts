// A run of the `verify` command on a finished list: started by one process of every process and replica watching the
// session (at most one running, by the database's own index), then ended once — passed, failed, cancelled by a person,
// or interrupted with its process. A run that passed or failed owes the session a look now: the guard chain then says
// done (passed) or continues the session with the failure (failed), or stops it after too many. Its failures since the
// last real user message and whether it repeated the failure before it are set here, at its end, so that a decision
// reads one row.
import { createHash } from "node:crypto";
import type { CancelReason, ResumeReason, VerifyFailure } from "../../core/reasons.js";
import { auditRow } from "../audit-row.js";
import { change, q, type Change, type Script } from "../script.js";
import type { VerificationRow } from "../schema.js";
import type { NewVerification, SessionScope, VerificationEnd } from "../types.js";
import { TAKE, withLook } from "./look-owed.js";
import { patchSession } from "./session-row.js";

/** The states of a run that stand for the work as it was when it started (the others are run again). */
const STANDS: ReadonlySet<string> = new Set(["running", "passed", "failed"]);

/** What a run came to: its exit (0: passed), its time, its output's last lines; a failure says how it failed. */
export type RunOutcome =
  | { passed: true; exitCode: 0; durationMs: number; output: string }
  | { passed: false; failure: VerifyFailure; exitCode: number | null; durationMs: number | null; output: string };

/**
 * The run, `running`, with its `verify_started` row; false when a run of the session runs already or one stands for
 * the work as it is. Either way the look that asked for it is made (a run's end owes the session the next).
 */
export function startVerification(run: NewVerification, now: number): Change<boolean> {
  return change("verify", run.sessionId, function* () {
    const started = auditRow(now, run, {
      event: "verify_started",
      detail: { verificationId: run.id, command: run.command },
    });
    const row = yield* q.session(run.sessionId);
    if (row?.recheckAt != null) yield* patchSession(withLook(row, TAKE), {}, now);
    // A look that read the session before another run ended would run the same check again: one that passed, failed
    // or runs for the work as it is now (no continuation since it started) stands.
    const latest = yield* q.latestVerification(run.sessionId);
    const continuations = row?.continuations ?? run.afterContinuations;
    if (latest && STANDS.has(latest.state) && latest.afterContinuations === continuations) return false;
    // A session's runs are ordered by their start: later than the latest, even on a clock that stepped back.
    const startedAt = Math.max(run.startedAt, (latest?.startedAt ?? 0) + 1);
    return yield* q.insertVerification({ ...run, startedAt, afterContinuations: continuations }, started);
  });
}

/**
 * The run ended as `outcome` says, with its `verified` or `verify_failed` row, and the session owed a look now; false
 * (nothing written) when it was no longer running as `owner`'s (a person cancelled it, or another process took it).
 */
export function endVerification(
  scope: SessionScope,
  run: { id: string; owner: string; command: string; ledgerHash: string | null },
  outcome: RunOutcome,
  now: number,
): Change<boolean> {
  return change("verify", scope.sessionId, function* () {
    const row = yield* q.session(scope.sessionId);
    const outputHash = createHash("sha256").update(outcome.output).digest("hex").slice(0, 32);
    let failures = 0;
    let repeated = false;
    if (!outcome.passed) {
      const before = yield* q.latestFailedVerification(scope.sessionId);
      const counts = before !== undefined && before.startedAt >= (row?.lastUserMessageAt ?? 0);
      failures = (counts ? before.failures : 0) + 1;
      repeated = counts && before.outputHash === outputHash && before.ledgerHash === run.ledgerHash;
    }
    const end: VerificationEnd = {
      state: outcome.passed ? "passed" : "failed",
      endedAt: now,
      exitCode: outcome.exitCode,
      durationMs: outcome.durationMs,
      outputTail: outcome.output,
      outputHash,
      failures,
      repeated,
    };
    if (!(yield* q.endVerification(run.id, run.owner, end))) return false;
    const detail = {
      verificationId: run.id,
      command: run.command,
      exitCode: outcome.exitCode,
      durationMs: outcome.durationMs,
      ...(outcome.passed ? {} : { failures, repeated, output: outcome.output }),
    };
    const entry = outcome.passed
      ? { event: "verified" as const, detail }
      : { event: "verify_failed" as const, reason: outcome.failure, detail };
    yield* q.audit(auditRow(now, scope, entry));
    if (row) yield* patchSession(withLook(row, { owe: now }), {}, now);
    return true;
  });
}

/** An end that stands for no result: nothing printed is kept, and it counts as no failure. */
function noResult(state: "cancelled" | "interrupted", run: VerificationRow, now: number): VerificationEnd {
  const durationMs = Math.max(0, now - run.startedAt);
  return {
    state,
    endedAt: now,
    exitCode: null,
    durationMs,
    outputTail: null,
    outputHash: null,
    failures: 0,
    repeated: false,
  };
}

/**
 * The session's running check, if one runs (in any process), cancelled with a `cancelled` row that names it: a person
 * wrote, stopped the session or pressed the key. Its process is killed by its owner, here or at the owner's next lease
 * tick (the renewal finds it no longer running). Part of the changes that cancel (stop.ts), or a change of its own.
 */
export function* cancelRunning(
  scope: SessionScope,
  reason: CancelReason,
  now: number,
): Script<VerificationRow | undefined> {
  const run = yield* q.latestVerification(scope.sessionId);
  if (run?.state !== "running" || !(yield* q.endVerification(run.id, null, noResult("cancelled", run, now))))
    return undefined;
  const detail = { verificationId: run.id, command: run.command };
  yield* q.audit(auditRow(now, scope, { event: "cancelled", reason, detail }));
  return run;
}

export function cancelVerification(
  scope: SessionScope,
  reason: CancelReason,
  now: number,
): Change<VerificationRow | undefined> {
  return change("verify", scope.sessionId, () => cancelRunning(scope, reason, now));
}

/**
 * A run whose process died (or stopped) before it ended: `interrupted`, with a `resumed` row that names it, and the
 * session owed a look now, which runs the check again. It counts as no failure. False when it was no longer running as
 * `run.owner`'s.
 */
export function interruptVerification(
  scope: SessionScope,
  run: VerificationRow,
  reason: ResumeReason,
  now: number,
): Change<boolean> {
  return change("verify", scope.sessionId, function* () {
    if (!(yield* q.endVerification(run.id, run.owner, noResult("interrupted", run, now)))) return false;
    const detail = { verificationId: run.id, command: run.command, interrupted: true };
    yield* q.audit(auditRow(now, scope, { event: "resumed", reason, detail }));
    const row = yield* q.session(scope.sessionId);
    if (row) yield* patchSession(withLook(row, { owe: now }), {}, now);
    return true;
  });
}

/** A run still this owner's stays its own for another lease; false once it is not (cancelled elsewhere). */
export function renewVerification(run: { id: string; owner: string }, leaseUntil: number): Change<boolean> {
  return change("verify", undefined, () => q.renewVerification(run.id, run.owner, leaseUntil));
}
