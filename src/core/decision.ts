// What the guard chain reads and what it answers: one session's durable facts, what this process saw and OpenCode
// answered, the configuration the guards use, and the verdict. Types only.
import type { ErrorKind } from "./errors.js";
import type { MessageFacts } from "./messages.js";
import type { ParkReason, SkipReason } from "./reasons.js";
import type { ProgressLedger, Todo, TodoSummary } from "./todos.js";
import type { FileLedger } from "./work.js";

export type Stage = "idle" | "deadline" | "before_prompt";

export interface DecisionConfig {
  enabled: boolean;
  continueChildSessions: boolean;
  errorCooldownMs: number;
  skipAgents: readonly string[];
  stagnationLimit: number;
  /** Continuations since the last todo progress whose turns changed files, before stopping (0: files never count). */
  workWithoutProgressLimit: number;
  maxContinuations: number;
  /** Spend budgets (0: none): per session since the last real user message, and per day across the database. */
  maxContinuationCost: number;
  maxContinuationTokens: number;
  dailyContinuationCost: number;
  /** Re-checks after provider errors (and retries after failed prompts) before giving up. */
  maxRetries: number;
  /** The longest backoff or cooldown there can be: one further away means the wall clock went back. */
  retryMaxMs: number;
  pauseAfterUserMessage: boolean;
  unproductiveLimit: number;
  continueAfterCompaction: boolean;
  /** The `verify` option: a finished list is checked by the user's command before it is done (null: it is not). */
  verify: { command: string; maxRuns: number } | null;
}

/**
 * The session's latest run of the `verify` command since its last real user message (`verifications`): it stands
 * for the work as the continuations left it, until another continuation goes out.
 */
export interface VerificationFact {
  state: "running" | "passed" | "failed";
  command: string;
  /** The session's continuations since the last real user message when it started (a later one makes it stale). */
  afterContinuations: number;
  /** Failed runs since the last real user message, this one included when it failed. */
  failures: number;
  /** It failed with what the failed run before it printed, and no file changed between them. */
  repeated: boolean;
  exitCode?: number | null;
  durationMs?: number | null;
  /** Its output's last lines (the prompt after a failure quotes them). */
  outputTail?: string;
}

/** A park that holds (its row in `parks`, state `parked`). */
export interface ParkFact {
  parkId: string;
  reason: ParkReason;
  /** When it wakes (epoch ms), unless a check passes first. */
  wakeAt: number;
}

/** What the database remembers about the session. */
export interface DurableFacts {
  parentId?: string | null;
  stoppedAt?: number | null;
  /** Who stopped it (`command`, `tui`, `cli`, `api`): the way back the user is told is the way they used. */
  stopSource?: string | null;
  /**
   * A person cancelled the countdown with the TUI's key since this look began (in another process, so no event told
   * this one). Known only once asked, after OpenCode was read.
   */
  userCancelledAt?: number | null;
  /**
   * A continuation of the session fired (by any process) since the idle this look judges was seen: it answered that
   * idle, and the session's next idle comes after it. Known only once asked, after OpenCode was read.
   */
  answeredBy?: { injectionId: string; firedAt: number } | null;
  /** The session's park, while it holds: nothing until it wakes (its own countdown then), or a person ends it. */
  parked?: ParkFact | null;
  /** The latest check of the finished list (`verify`), if one ran since the last real user message. */
  verification?: VerificationFact | null;
  recovering: boolean;
  lastErrorAt?: number | null;
  lastErrorKind?: ErrorKind | string | null;
  lastErrorName?: string | null;
  /** Provider errors in a row (transient or other) since the last turn that ended well or the last real user message. */
  errorStreak?: number;
  /** The provider's retry-after of the last error, in ms from `lastErrorAt`. */
  lastErrorRetryAfterMs?: number | null;
  abortedAt?: number | null;
  tokenLimitAt?: number | null;
  continuations: number;
  stagnantContinuations: number;
  /** Continuations since the last todo progress whose turns changed the project's files (held, not reset, by others). */
  workContinuations?: number;
  /** The recent contents of the files the session's turns touched: what a turn's files are judged against. */
  fileLedger?: FileLedger | null;
  /** What this session's continuations cost since the last real user message (their bills). */
  spent?: { cost: number; tokens: number };
  /** What every continuation of the database cost today (UTC, on the database's clock). */
  spentToday?: number;
  /** The bills of this session's latest continuations, oldest first: the next one's estimate. */
  recentBills?: ReadonlyArray<{ cost: number; tokens: number }>;
  /**
   * The database's latest bills of today, oldest first, read when the session has none of its own: the daily budget's
   * estimate for a session's first continuation.
   */
  recentBillsToday?: ReadonlyArray<{ cost: number; tokens: number }>;
  /**
   * Granted beyond the caps since the last real user message or resume (`todo-continuation allow`, the palette's "Allow
   * more"): added to `maxContinuations` and to each spend cap that is set (see budget.ts).
   */
  allowed?: Allowance;
  /** Text-only replies in a row to continuations (before the last one). */
  unproductiveReplies?: number;
  /** Progress baseline: the todos as of the continuations since the last real user message. */
  ledger?: ProgressLedger | null;
  backoffUntil?: number | null;
  /**
   * Failed attempts in a row (failed, unknown, never started). Beyond `maxRetries` the enforcer gave up: it ends only
   * with a real user message, a resume, or a continuation's turn seen starting.
   */
  consecutiveFailures?: number;
  /** The last explicit resume: a refusal the messages still show from before it no longer holds the session. */
  resumedAt?: number | null;
  /** A real user message followed one of our continuations: the user took the wheel. */
  pausedAt?: number | null;
  pauseMessageId?: string | null;
  /** The todos when the user took over: progress is measured against them. */
  pauseLedger?: ProgressLedger | null;
}

/** What a person allowed a session beyond its caps: continuations, cost (in the models' currency), tokens. */
export interface Allowance {
  continuations: number;
  cost: number;
  tokens: number;
}

/** What this process sees right now (memory mirror of events, and the host when asked). */
export interface LiveFacts {
  /** Another continuation of this session is queued or in flight. */
  inFlight?: boolean;
  status?: "busy" | "idle" | "retry";
  /**
   * OpenCode was asked for the session's status and did not answer (a timeout, an error): `status` is then only what
   * this process saw in events, which says nothing of a turn another process's continuation started.
   */
  statusUnread?: boolean;
  /** Busy sessions below this one (children, grandchildren…). */
  busyChildren?: number;
  busyDescendantIds?: readonly string[];
  /** Questions and permission requests asked and not yet answered. */
  pendingRequests?: number;
  messages?: MessageFacts;
  /** A `session.compacted` arrived and nothing real happened in the session since. */
  compactedRecently?: boolean;
  /** The agent a continuation would be sent with (that of the latest real message). */
  agent?: string;
  agentCanWrite?: boolean;
}

export interface DecisionInput {
  stage: Stage;
  now: number;
  config: DecisionConfig;
  durable: DurableFacts;
  live: LiveFacts;
  /** `undefined`: not fetched yet (pre-check); `"fetch_failed"`: the host could not say. */
  todos?: readonly Todo[] | "fetch_failed";
  /** The list the latest `todo.updated` reported: names a pre-check's stop for what it is when every todo is closed. */
  reportedTodos?: readonly Todo[];
  /**
   * The continuation decided re-sends one that was fired and never answered (its call failed, or it was lost with
   * its process): the turn before was judged when that one was fired, and the streaks do not count it again.
   */
  retrying?: boolean;
}

/** What a continuation's turn counted as: todos moved, files changed (net of rewrites and undos), or neither. */
export interface Progress {
  counted: "todos" | "files" | "none";
  /** Files whose content is new; with `counted: "none"`, 0 when the turn touched files all the same. */
  filesChanged?: number;
  /** Files written back to the same or a recent content. */
  filesChurned?: number;
}

/** Why a takeover pause ends: the todos moved, the list was replaced, or the user's message answered our question. */
export type PauseLift = "progress" | "rewritten" | "answered_question";

export type Decision =
  | { verdict: "skip"; reason: SkipReason; detail: Record<string, unknown> }
  /** Every todo is closed after continuations: run the `verify` command before calling it done. */
  | { verdict: "verify"; command: string; summary: TodoSummary; detail: Record<string, unknown> }
  | {
      verdict: "continue";
      /** Undefined when the todos were not known yet (a pre-check). */
      summary?: TodoSummary;
      /** Continuations since the last todo progress whose turns did no work (stored when this one is sent). */
      stagnantStreak: number;
      /** Continuations since the last todo progress whose turns changed files (stored when this one is sent). */
      workStreak: number;
      /** What the last continuation's turn counted as; absent on the first since the user's message. */
      progress?: Progress;
      /** Text-only replies in a row (stored when this one is sent). */
      unproductiveStreak: number;
      /** Not before this time: a failed prompt's backoff or a provider error's cooldown is still running. */
      notBefore?: number;
      waitingFor?: "backoff" | "error_cooldown";
      pauseLifted?: PauseLift;
      /** The last turn ended well after earlier provider errors: their count starts over. */
      errorsResolved?: boolean;
      /** The check of the finished list failed: the continuation says so, with its last lines. */
      checkFailed?: VerificationFact;
    };
