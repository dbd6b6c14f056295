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
  "notified",
  "notice_failed",
  "parked",
  "woke",
  "unparked",
  "verify_started",
  "verified",
  "verify_failed",
] as const;
export type AuditEvent = (typeof AUDIT_EVENTS)[number];

/**
 * The skip reasons, in the order the guard chain checks them (decide.ts): cheap, durable and user-intent guards first,
 * then live host facts, then the todos, then the loop protections that need the todos. Each has its guard in
 * decide.ts and its words, notice, stop and docs row in skip-reasons.ts, both keyed by this type.
 */
export const SKIP_REASONS = [
  "disabled",
  "session_filtered",
  "stopped",
  "user_key",
  "parked",
  "recovering",
  "aborted",
  "token_limit",
  "provider_error",
  "errors_persist",
  "gave_up",
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
  "verify_failed",
  "todos_complete",
  "user_took_over",
  "no_progress_reply",
  "stagnation",
  "cost_budget",
  "budget_exhausted",
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/**
 * What ends an armed countdown early (each with its words and docs row in cancel-reasons.ts). A guard that says no
 * when the countdown ends closes it with the guard's reason.
 */
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

/** `expired` rows: a countdown (or an idle owed a look) found too late after a restart, with its lateness. */
export const EXPIRE_REASONS = ["stale_after_restart"] as const;
export type ExpireReason = (typeof EXPIRE_REASONS)[number];
export const EXPIRE_REASON: ExpireReason = "stale_after_restart";

/**
 * `resumed` rows: a countdown picked up after a restart (`restart`), taken over from a process whose lease ran out
 * (`lease_expired`), or adopted again once this process's database works after a pause (`store_recovered`).
 */
export const RESUME_REASONS = ["restart", "lease_expired", "store_recovered"] as const;
export type ResumeReason = (typeof RESUME_REASONS)[number];
export const RESUME_REASON: ResumeReason = "restart";
export const TAKEOVER_REASON: ResumeReason = "lease_expired";
export const STORE_RECOVERED_REASON: ResumeReason = "store_recovered";

/** `reconciled` rows: a continuation whose outcome was uncertain, looked for in the session's messages. */
export const RECONCILE_REASONS = ["found", "not_found"] as const;
export type ReconcileReason = (typeof RECONCILE_REASONS)[number];

/** `stopped` and `unstopped` rows: who set or lifted the stop. */
export const STOP_SOURCES = ["command", "cli", "api", "tui", "dashboard"] as const;
export type StopSource = (typeof STOP_SOURCES)[number];

/** `parked` rows: why the session waits (a provider's limit, OpenCode's own retry wait, the agent's `continue_later`). */
export const PARK_REASONS = ["limit", "opencode_retry", "agent"] as const;
export type ParkReason = (typeof PARK_REASONS)[number];

/** `woke` rows: what ended a park into a look (its time came, its check passed, a person woke it). */
export const WAKE_CAUSES = ["time", "check", "command", "palette", "dashboard"] as const;
export type WakeCause = (typeof WAKE_CAUSES)[number];

/** `unparked` rows: what ended a park with no look (a person wrote, stopped it or pressed the key; it ran too long). */
export const UNPARK_REASONS = ["user_message", "stop", "key", "command", "expired"] as const;
export type UnparkReason = (typeof UNPARK_REASONS)[number];

/**
 * `verify_failed` rows: how the check of a finished list failed — it exited other than 0, ran past its time, or could
 * not be run at all. Never a pass.
 */
export const VERIFY_FAILURES = ["exit", "timeout", "not_run"] as const;
export type VerifyFailure = (typeof VERIFY_FAILURES)[number];

/** `notified` and `notice_failed` rows: the kind of notice delivered, or whose delivery failed (docs/notifications.md). */
export const NOTICE_KINDS = ["question", "budget", "stuck", "done", "error", "waiting"] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];
/** What a channel takes when it names no `kinds`: every kind but `waiting` (a park is news only to who asks for it). */
export const DEFAULT_NOTICE_KINDS: readonly NoticeKind[] = NOTICE_KINDS.filter((kind) => kind !== "waiting");

/** Every reason each audit event may carry (`null` alone: the event has no reason). */
export const AUDIT_VOCABULARY: { readonly [E in AuditEvent]: readonly (string | null)[] } = {
  armed: [null],
  cancelled: CANCEL_REASONS,
  skipped: SKIP_REASONS,
  fired: [null],
  injected: [null],
  injection_failed: INJECTION_FAILURE_REASONS,
  expired: EXPIRE_REASONS,
  resumed: RESUME_REASONS,
  reconciled: RECONCILE_REASONS,
  stopped: STOP_SOURCES,
  unstopped: STOP_SOURCES,
  notified: NOTICE_KINDS,
  notice_failed: NOTICE_KINDS,
  parked: PARK_REASONS,
  woke: WAKE_CAUSES,
  unparked: UNPARK_REASONS,
  verify_started: [null],
  verified: [null],
  verify_failed: VERIFY_FAILURES,
};

/**
 * One audit row as the code writes it: every event with exactly the reasons it may carry. A countdown that a guard
 * closes at its deadline is `skipped` with the guard's reason; one that activity ends is `cancelled`.
 */
export type AuditRecord =
  | { event: "armed" | "fired" | "injected"; reason?: null }
  | { event: "skipped"; reason: SkipReason }
  | { event: "cancelled"; reason: CancelReason }
  | { event: "injection_failed"; reason: InjectionFailureReason }
  | { event: "expired"; reason: ExpireReason }
  | { event: "resumed"; reason: ResumeReason }
  | { event: "reconciled"; reason: ReconcileReason }
  | { event: "stopped" | "unstopped"; reason: StopSource }
  | { event: "notified" | "notice_failed"; reason: NoticeKind }
  | { event: "parked"; reason: ParkReason }
  | { event: "woke"; reason: WakeCause }
  | { event: "unparked"; reason: UnparkReason }
  | { event: "verify_started" | "verified"; reason?: null }
  | { event: "verify_failed"; reason: VerifyFailure };

export type AuditEntry = AuditRecord & { detail?: Record<string, unknown> };
