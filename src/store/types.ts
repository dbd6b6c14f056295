// The shapes the store's callers and its backends share. Nothing here depends on a database.
import type { SessionPatch } from "../core/transitions.js";
import type { CountdownRow, InjectionRow, ParkRow, SessionRow } from "./schema.js";

/**
 * Where a process's sessions live: an OpenCode instance directory, on one OpenCode server when a database serves
 * several (a fleet, or plugins in pods that share a directory path). `server` null or absent: the machine's own.
 * A process recovers, reconciles and re-checks only the rows of its scope.
 */
export interface Scope {
  directory: string;
  server?: string | null;
}

/** A session owed a look (`sessions.recheck_at`): since when, and when it is due. */
export interface OwedLook {
  sessionId: string;
  recheckAt: number | null;
  owedSince: number | null;
}

/** A row as a read of several scopes answers it: with the scope it belongs to. */
export type InScope<T> = T & { directory: string; server: string | null };

export interface SessionScope extends Scope {
  sessionId: string;
}

export interface NewCountdown extends SessionScope {
  id: string;
  armedAt: number;
  deadlineAt: number;
  owner: string;
  leaseUntil: number;
  attempt: number;
  todosOpen: number | null;
  todosTotal: number | null;
}

/**
 * What a park waits for, as one (re)park writes it whole: why, since when, until when, and the check it polls (all
 * null without one).
 */
export type ParkTerms = Pick<
  ParkRow,
  | "reason"
  | "parkedAt"
  | "wakeAt"
  | "backoffMs"
  | "checkCommand"
  | "checkEveryMs"
  | "checkRuns"
  | "nextCheckAt"
  | "detail"
>;

/**
 * Which park an end may end, besides holding: one whose wake time has come by `dueBy`, one with a check, one parked
 * for `reason`. Nothing given: whichever holds.
 */
export interface ParkEnding {
  dueBy?: number;
  withCheck?: boolean;
  reason?: ParkRow["reason"];
}

/** A park as it is first written, `parked`: its terms, and when the wait it continues began (`since`). */
export interface NewPark extends SessionScope, ParkTerms {
  id: string;
  since: number;
}

/** A run of the `verify` command as it starts: `running`, owned by the process that runs it. */
export interface NewVerification extends SessionScope {
  id: string;
  command: string;
  afterContinuations: number;
  startedAt: number;
  /** A hash of the session's file ledger now (null: it has none). */
  ledgerHash: string | null;
  owner: string;
  leaseUntil: number;
}

/** How a run of the `verify` command ended, with what it printed and what it counts as among the session's runs. */
export interface VerificationEnd {
  state: "passed" | "failed" | "cancelled" | "interrupted";
  endedAt: number;
  exitCode: number | null;
  durationMs: number | null;
  outputTail: string | null;
  outputHash: string | null;
  failures: number;
  repeated: boolean;
}

export interface NewInjection extends SessionScope {
  id: string;
  countdownId: string;
  messageId: string | null;
  createdAt: number;
  agent: string | null;
  model: string | null;
  variant: string | null;
  todosTotal: number;
  todosOpen: number;
  attempt: number;
  /** JSON of the session columns set once the continuation is known to have gone out. */
  onSent?: string | null;
  owner: string;
  leaseUntil: number;
}

/** One notice for one channel, as its stop's transaction writes it: `pending`, due at once. */
export interface NewNotice extends SessionScope {
  /** `<noticeId>:<channel>`. */
  id: string;
  noticeId: string;
  channel: string;
  kind: string;
  reason: string;
  createdAt: number;
  /** JSON of the notice. */
  body: string;
}

/** What became of a notice's delivery attempt (or of its turn, when the rate limit holds it). */
export interface NoticeSettlement {
  state: "pending" | "sent" | "failed";
  attempts: number;
  nextAttemptAt: number;
  sentAt: number | null;
  lastError: string | null;
  /** The body as sent (with what it folded in and the session's title), or as it stands. */
  body: string;
}

export type SessionUpdate = SessionPatch & Partial<Pick<SessionRow, "parentId" | "projectId" | "title" | "deletedAt">>;
/** A session change: the columns to write, or a pure function that computes them from the row read in the transaction. */
export type SessionChange = SessionUpdate | ((row: SessionRow) => SessionUpdate);

export type CountdownRef = Pick<CountdownRow, "id" | "sessionId" | "directory"> & Partial<Pick<CountdownRow, "server">>;
/** An injection as a state change names it (its scope goes on the audit rows). */
export type InjectionRef = Pick<InjectionRow, "id" | "sessionId" | "directory"> & Partial<Pick<InjectionRow, "server">>;
/** What a state change needs to know of a session's armed countdown. */
export type ArmedRef = Pick<CountdownRow, "id" | "owner" | "leaseUntil">;

/** A continuation of a session that went out (or may have: pending, sent, or uncertain), as a look meets it. */
export interface ContinuationRef {
  injectionId: string;
  firedAt: number;
}

/**
 * What a decision reads of one session, in one statement (statements.ts `sessionState`): its row and what other rows
 * say of it now, and, when asked with the idle a look judges, what answered that idle since.
 */
export interface SessionState {
  row: SessionRow | undefined;
  /** A continuation of the session is recorded `pending` (by any process). */
  pending: boolean;
  /** The session's park while one holds. */
  park?: Pick<ParkRow, "id" | "reason" | "wakeAt">;
  /** The session's armed countdown, if one is armed. */
  armed?: ArmedRef;
  /** When a person last cancelled the session's countdown with the TUI's key since the idle, if they did. */
  userCancelledAt?: number;
  /** The latest continuation fired since the idle (by any process), not refused. */
  answeredBy?: ContinuationRef;
}

/** Why the store does not work right now (the enforcer pauses until it does). */
export type StoreProblem = "read-only" | "full" | "locked" | "damaged" | "gone" | "unavailable";
