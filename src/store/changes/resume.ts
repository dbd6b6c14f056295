// An explicit resume (/resume-continuation, the API, the CLI, the TUI's palette): lifts the durable stop and the pause
// after a person stepped in, and starts the loop protections over. Who resumes decides who looks at the session next:
// the engine's API looks at once, and a command's own turn ends in an idle that is looked at; the CLI and the TUI are
// other processes, so the look is left owed (`recheck_at`), and a running enforcer takes it within a lease tick.
import type { StopSource } from "../../core/reasons.js";
import { afterExplicitResume } from "../../core/transitions.js";
import { auditRow } from "../audit-row.js";
import { change, q, type Change } from "../script.js";
import type { SessionScope } from "../types.js";
import { patchSession } from "./session-row.js";

const LOOKS_ITSELF: ReadonlySet<StopSource> = new Set(["api", "command"]);

/** False when there was nothing to lift or start over. */
export function resume(scope: SessionScope, source: StopSource, now: number): Change<boolean> {
  return change("resume", scope.sessionId, function* () {
    const row = yield* q.session(scope.sessionId);
    if (!row) return false;
    const stopped = row.stoppedAt != null;
    const paused = row.pausedAt != null;
    const counts =
      row.continuations +
      row.stagnantContinuations +
      row.unproductiveReplies +
      row.consecutiveFailures +
      row.errorStreak;
    if (!stopped && !paused && counts === 0) return false;
    const owed = LOOKS_ITSELF.has(source) ? {} : { recheckAt: now };
    yield* patchSession(row, { ...afterExplicitResume(), ...owed }, now);
    const detail = {
      stopped,
      paused,
      continuations: row.continuations,
      errors: row.errorStreak,
      failures: row.consecutiveFailures,
    };
    yield* q.audit(auditRow(now, scope, { event: "unstopped", reason: source, detail }));
    return true;
  });
}
