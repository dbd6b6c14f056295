// What holds a session until someone acts, as far as its row tells: the durable stop, the pause after a person stepped
// in, a provider's refusal, and the stop the person was last told of. Which reasons are stops, what a resume or an
// allowance lifts and their words are the skip reasons' facts (skip-reasons.ts); this reads a row through them, for a
// resume (what it lifts) and for `todo-continuation status` (why a session is not continuing, and the way on). Pure.
import { explain } from "./explain.js";
import type { SkipReason } from "./reasons.js";
import { ALLOW_LIFTS, RESUME_LIFTS, STOP_NOTICES, SKIP_FACTS } from "./skip-reasons.js";
import { goOnCommand, type Explanation } from "./words.js";

/** The columns of a session's row that say what holds it. */
export interface HoldColumns {
  stoppedAt: number | null;
  pausedAt: number | null;
  lastErrorKind: string | null;
  notifiedStop: string | null;
}

/** Every hold on the session: the stop, the pause, a refusal, then the stop the person was told of. */
export function holdsOf(row: HoldColumns): SkipReason[] {
  const holds = new Set<SkipReason>();
  if (row.stoppedAt != null) holds.add("stopped");
  if (row.pausedAt != null) holds.add("user_took_over");
  if (row.lastErrorKind === "permanent") holds.add("provider_error");
  // A question or all done told is no hold: the session waits for the person's answer, not for them to lift anything.
  if (row.notifiedStop && STOP_NOTICES.has(row.notifiedStop)) holds.add(row.notifiedStop as SkipReason);
  return [...holds];
}

/**
 * The one command that lifts every hold: `allow` when each is a spent budget, else `resume` — and opening the session
 * to write (or compact) for a hold no resume lifts (a full context).
 */
export function wayOnFrom(holds: readonly string[], sessionId: string): string {
  if (holds.length > 0 && holds.every((reason) => ALLOW_LIFTS.has(reason))) return goOnCommand("allow", sessionId);
  // A park holds only until it wakes: waking it now is the way on.
  if (holds.length > 0 && holds.every((reason) => reason === "parked")) return goOnCommand("wake", sessionId);
  const steps: string[] = [];
  if (holds.some((reason) => RESUME_LIFTS.has(reason))) steps.push(goOnCommand("resume", sessionId));
  if (holds.some((reason) => !RESUME_LIFTS.has(reason)))
    steps.push(`${goOnCommand("open", sessionId)} (compact or write)`);
  return steps.join(", then ");
}

/** A session's row, with the latest decision that told its stop (a skip, or the failed send given up on). */
export interface HeldRow extends HoldColumns {
  sessionId: string;
  stopSource: string | null;
  lastErrorAt: number | null;
  told: { at: number; event: string; detail: Record<string, unknown> } | null;
}

/** Why a session is not continuing: its holds, the first one's words and since when, and the way on. */
export interface Held {
  reasons: SkipReason[];
  since: number | null;
  why: Explanation;
  goOn: string;
}

/** The holds of a session in the words the toast said them; undefined when nothing holds it. */
export function heldOf(row: HeldRow): Held | undefined {
  const reasons = holdsOf(row);
  const first = reasons[0];
  if (!first) return undefined;
  const told = first === row.notifiedStop ? row.told : null;
  const detail = told?.detail ?? (first === "stopped" ? { stopSource: row.stopSource } : {});
  const why = (told && explain(told.event, first, detail)) || SKIP_FACTS[first].words(detail);
  const since =
    first === "stopped"
      ? row.stoppedAt
      : first === "user_took_over"
        ? row.pausedAt
        : (told?.at ?? (first === "provider_error" ? row.lastErrorAt : null));
  return { reasons, since, why, goOn: wayOnFrom(reasons, row.sessionId) };
}
