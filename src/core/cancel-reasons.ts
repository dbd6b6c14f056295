// Each cancel reason once, keyed by the reason: what a person is told when it ends a countdown, and its row of the
// countdowns' table in docs/how-it-decides.md (written by `npm run docs:reasons`). A reason added to CANCEL_REASONS
// (reasons.ts) without its entry here fails the type check. Pure.
import type { CancelReason } from "./reasons.js";
import type { Explanation } from "./words.js";

export interface CancelFacts {
  /** The words for a countdown it cancelled. */
  words: Explanation;
  /** Its row of the countdowns' table: what ended the countdown (Markdown). */
  when: string;
}

const waiting = (text: string): Explanation => ({ standing: "waiting", text });

export const CANCEL_FACTS: { readonly [R in CancelReason]: CancelFacts } = {
  user_message: {
    words: waiting("cancelled: you wrote"),
    when: "a real user message (an echo within `gracePeriodMs` of arming does not cancel)",
  },
  assistant_activity: {
    words: waiting("cancelled: the assistant went on"),
    when: "the assistant produced output",
  },
  tool_activity: { words: waiting("cancelled: a tool ran"), when: "a tool started or finished" },
  session_error: { words: waiting("cancelled: an error"), when: "a `session.error` arrived" },
  session_deleted: { words: waiting("cancelled: the session was deleted"), when: "the session was deleted" },
  superseded: { words: waiting("replaced by a newer countdown"), when: "a newer idle re-armed it" },
  busy: { words: waiting("cancelled: the session went on"), when: "the session became busy again" },
  recovering: {
    words: waiting("cancelled: OpenCode is retrying"),
    when: "status `retry` (OpenCode is retrying the provider itself), or marked recovering through the [API](programmatic-api.md)",
  },
  stopped: { words: waiting("cancelled: stopped"), when: "a durable stop was set on the session" },
  user_key: {
    words: { standing: "paused", text: "cancelled by you" },
    when: "you cancelled it: the TUI plugin's key, or typing into the prompt (see [tui.md](tui.md#cancelling-a-countdown))",
  },
};

/** The facts of an audit row's reason, if it is a cancel reason (rows carry it as a plain string). */
export function cancelFactsOf(reason: string): CancelFacts | undefined {
  return Object.hasOwn(CANCEL_FACTS, reason) ? CANCEL_FACTS[reason as CancelReason] : undefined;
}
