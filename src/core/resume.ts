// The misfire policy: what a process does with an armed countdown it finds in the database at start-up (or takes
// over from an owner whose lease ran out). Wall-clock deadlines are all that survive a restart, so a clock that
// jumped is bounded here: no countdown waits longer than its own configured duration.

export type ResumeAction =
  { action: "rearm"; remainingMs: number } | { action: "fire"; lateMs: number } | { action: "expire"; lateMs: number };

export function classifyArmedCountdown(
  countdown: { armedAt: number; deadlineAt: number },
  now: number,
  resumeWindowMs: number,
): ResumeAction {
  const durationMs = Math.max(0, countdown.deadlineAt - countdown.armedAt);
  if (now < countdown.deadlineAt) {
    // A backward jump makes the deadline look further away than it was ever set: cap the wait at the duration.
    return { action: "rearm", remainingMs: Math.min(countdown.deadlineAt - now, durationMs) };
  }
  const lateMs = now - countdown.deadlineAt;
  return lateMs < resumeWindowMs ? { action: "fire", lateMs } : { action: "expire", lateMs };
}
