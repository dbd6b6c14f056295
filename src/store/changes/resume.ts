// An explicit resume (/resume-continuation, the API, the CLI, the TUI's palette): lifts every hold a toast or the panel
// tells the user to resume from — the durable stop, the pause after a person stepped in, a provider's refusal still
// shown in the session's messages, attempts given up, the loop protections' stops — and says which it lifted. Who
// resumes decides who looks at the session next: the engine's API looks at once, and a command's own turn ends in an
// idle that is looked at; the CLI and the TUI are other processes, so the look is left owed (`recheck_at`), and a
// running enforcer takes it within a lease tick.
import { holdsOf } from "../../core/holds.js";
import type { SkipReason, StopSource } from "../../core/reasons.js";
import { RESUME_LIFTS } from "../../core/skip-reasons.js";
import { afterExplicitResume } from "../../core/transitions.js";
import { auditRow } from "../audit-row.js";
import { change, q, type Change } from "../script.js";
import type { SessionScope } from "../types.js";
import { withLook } from "./look-owed.js";
import { patchSession } from "./session-row.js";

/** Who looks at the session itself after lifting a hold; the others (the CLI, the TUI) leave the look owed. */
export const LOOKS_ITSELF: ReadonlySet<StopSource> = new Set(["api", "command"]);

export interface Resumed {
  /** The holds lifted, by the reason the user was shown: `stopped`, `user_took_over`, `provider_error`, `gave_up`… */
  lifted: SkipReason[];
  /** False when there was nothing to lift or start over. */
  changed: boolean;
}

export function resume(scope: SessionScope, source: StopSource, now: number): Change<Resumed> {
  return change("resume", scope.sessionId, function* () {
    const row = yield* q.session(scope.sessionId);
    if (!row) return { lifted: [], changed: false };
    // A full context is no hold a resume lifts: the way out is another (write, or compact).
    const lifted = holdsOf(row).filter((reason) => RESUME_LIFTS.has(reason));
    const counts =
      row.continuations +
      row.stagnantContinuations +
      row.workContinuations +
      row.unproductiveReplies +
      row.consecutiveFailures +
      row.errorStreak +
      row.continuationTokens +
      (row.continuationCost > 0 ? 1 : 0);
    if (lifted.length === 0 && counts === 0) return { lifted, changed: false };
    const owed = LOOKS_ITSELF.has(source) ? row : withLook(row, { owe: now });
    yield* patchSession(owed, afterExplicitResume(now), now);
    const detail = {
      lifted,
      stopped: row.stoppedAt != null,
      paused: row.pausedAt != null,
      continuations: row.continuations,
      errors: row.errorStreak,
      failures: row.consecutiveFailures,
    };
    yield* q.audit(auditRow(now, scope, { event: "unstopped", reason: source, detail }));
    return { lifted, changed: true };
  });
}
