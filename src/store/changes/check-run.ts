// A park's check, run by one process at a time: its run is claimed first (a compare-and-swap on the park's count of
// runs, which also sets when the next run is due), so that of every process and replica watching the park one runs
// it. What a run that did not pass printed is kept, for the wake at the park's time to say; a run that passes wakes
// the park (wake.ts, cause `check`).
import { change, q, type Change } from "../script.js";
import type { ParkRow } from "../schema.js";
import type { SessionScope } from "../types.js";

/** The run after `park.checkRuns` taken by this process (true), or by another one first, or the park over (false). */
export function claimCheckRun(scope: SessionScope, park: ParkRow, now: number): Change<boolean> {
  return change("check-run", scope.sessionId, function* () {
    if (park.checkEveryMs === null) return false;
    return yield* q.claimCheck(park.id, park.checkRuns, now + park.checkEveryMs);
  });
}

/** A run that did not pass: its last lines kept on the park while it holds. */
export function checkFailed(scope: SessionScope, parkId: string, output: string): Change<boolean> {
  return change("check-run", scope.sessionId, function* () {
    return yield* q.recordCheckOutput(parkId, output);
  });
}
