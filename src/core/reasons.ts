// The stable vocabulary of `audit_events`: users filter on these strings, so they never change meaning.

export const AUDIT_EVENTS = [
  "armed",
  "cancelled",
  "skipped",
  "fired",
  "injected",
  "injection_failed",
  "expired",
  "resumed",
  "reconciled",
  "stopped",
  "unstopped",
] as const;
export type AuditEvent = (typeof AUDIT_EVENTS)[number];

/** The guards, in the order the decision core checks them (see decide.ts). */
export const SKIP_REASONS = [
  "disabled",
  "session_filtered",
  "stopped",
  "recovering",
  "aborted",
  "token_limit",
  "provider_error",
  "errors_persist",
  "error_cooldown",
  "backoff",
  "in_flight",
  "busy",
  "children_running",
  "waiting_for_user",
  "compaction",
  "agent_skipped",
  "no_write_permission",
  "todo_fetch_failed",
  "no_todos",
  "todos_complete",
  "user_took_over",
  "no_progress_reply",
  "stagnation",
  "budget_exhausted",
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** What ends an armed countdown early. A guard that says no when the countdown ends closes it with the guard's reason. */
export const CANCEL_REASONS = [
  "user_message",
  "assistant_activity",
  "tool_activity",
  "session_error",
  "session_deleted",
  "superseded",
  "busy",
  "stopped",
  "recovering",
  "user_key",
] as const;
export type CancelReason = (typeof CANCEL_REASONS)[number];

/** `injection_failed` rows: why a prompt call or its turn failed, and what happens next. */
export const INJECTION_FAILURE_REASONS = ["retrying", "gave_up", "timeout", "not_started"] as const;
export type InjectionFailureReason = (typeof INJECTION_FAILURE_REASONS)[number];

/** `expired` rows: a countdown found too late after a restart. `resumed` rows: a countdown picked up after a restart. */
export const EXPIRE_REASON = "stale_after_restart";
export const RESUME_REASON = "restart";
/** `resumed` by another process whose owner's lease ran out. */
export const TAKEOVER_REASON = "lease_expired";
/** `resumed` by this process once its database works again after a pause. */
export const STORE_RECOVERED_REASON = "store_recovered";
