// What the continuation after a failed check of the finished list says, after the prompt's header: the command, how
// it ended, and its last lines, quoted as a park's check output is (each line under a bar, so none can pass for ours).
import type { VerificationFact } from "./decision.js";
import { quotedOutput } from "./wake-note.js";
import { duration } from "./words.js";

/**
 * A failing test run says what failed in more lines than a park's check (the failing assertion, its diff, the
 * summary): this many of its last lines, each cut as a park's are.
 */
export const VERIFY_OUTPUT_LINES = 60;

export function verifyFailedNote(check: VerificationFact): string {
  const took = check.durationMs == null ? "" : ` after ${duration(check.durationMs)}`;
  const ended =
    check.exitCode == null
      ? `did not finish${took} (killed at its time limit, or it could not run)`
      : `exited ${check.exitCode}${took}`;
  return (
    `Every todo is closed, but the check of the work failed: ${JSON.stringify(check.command)} ${ended}. ` +
    `Its last lines:\n${quotedOutput(check.outputTail ?? "", VERIFY_OUTPUT_LINES)}\n` +
    "Fix what it reports (reopen or add a todo for it if that helps), until the check passes."
  );
}
