// A run of the `verify` command on a finished list: started by one process of every process and replica watching the
// session (at most one running, by the database's own index), then ended once — passed, failed, cancelled by a person,
// or interrupted with its process. A run that passed or failed owes the session a look now: the guard chain then says
// done (passed) or continues the session with the failure (failed), or stops it after too many. Its failures since the
// last real user message and whether it repeated the failure before it are set here, at its end, so that a decision
// reads one row.
import { createHash } from "node:crypto";
import type { VerifyFailure } from "../../core/reasons.js";
import { auditRow } from "../audit-row.js";
import { change, q, type Change } from "../script.js";
import type { NewVerification, SessionScope, VerificationEnd } from "../types.js";
import { withLook } from "./look-owed.js";
import { patchSession } from "./session-row.js";

/** What a run came to: its exit (0: passed), its time, its output's last lines; a failure says how it failed. */
export type RunOutcome =
  | { passed: true; exitCode: 0; durationMs: number; output: string }
  | { passed: false; failure: VerifyFailure; exitCode: number | null; durationMs: number | null; output: string };

/** The run, `running`, with its `verify_started` row; false when a run of the session is running already. */
export function startVerification(run: NewVerification, now: number): Change<boolean> {
  return change("verify", run.sessionId, function* () {
    const started = auditRow(now, run, {
      event: "verify_started",
      detail: { verificationId: run.id, command: run.command },
    });
    return yield* q.insertVerification(run, started);
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
