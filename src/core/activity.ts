// Which activity ends an armed countdown, and why. Pure: the engine passes the time and the countdown's arming time.
import type { CancelReason } from "./reasons.js";

export type Activity =
  "user_message" | "assistant_activity" | "tool_activity" | "session_error" | "session_deleted" | "busy";

/**
 * `undefined` means the countdown keeps running. A user message within the grace period after arming is taken for
 * the echo of the turn that just ended (OpenCode re-publishes the user message when it summarises the turn).
 */
export function cancellationFor(
  activity: Activity,
  armedAt: number,
  now: number,
  gracePeriodMs: number,
): CancelReason | undefined {
  if (activity === "user_message") {
    const sinceArming = now - armedAt;
    return sinceArming >= 0 && sinceArming < gracePeriodMs ? undefined : "user_message";
  }
  return activity;
}
