// The store as the engine sees it. Every read and every state change returns a promise, so that a store whose driver
// is asynchronous (PostgreSQL) fits behind the same interface as SQLite. A state change is one transaction: it reads
// what it needs, writes, and writes the audit rows that explain it. Where a change depends on the row (a failure
// count, a ledger), the caller passes a pure function of the row, applied inside that transaction.
import type { AuditEntry, StopSource } from "../core/reasons.js";
import type { SessionPatch } from "../core/transitions.js";
import type { CountdownRow, InjectionRow, SessionRow } from "./schema.js";
import type { PruneReport } from "./sqlite/retention.js";

/**
 * Where a process's sessions live: an OpenCode instance directory, on one OpenCode server when a database serves
 * several (a fleet, or plugins in pods that share a directory path). `server` null or absent: the machine's own.
 * A process recovers, reconciles and re-checks only the rows of its scope.
 */
export interface Scope {
  directory: string;
  server?: string | null;
}

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

export type SessionUpdate = SessionPatch & Partial<Pick<SessionRow, "parentId" | "projectId" | "deletedAt">>;
/** A session change: the columns to write, or a pure function that computes them from the row read in the transaction. */
export type SessionChange = SessionUpdate | ((row: SessionRow) => SessionUpdate);

/** What a state change computed from the session row writes besides its own row. */
export interface Settlement {
  patch?: SessionUpdate;
  audit: AuditEntry[];
}

export type CountdownRef = Pick<CountdownRow, "id" | "sessionId" | "directory"> & Partial<Pick<CountdownRow, "server">>;
/** An injection as a state change names it (its scope goes on the audit rows). */
export type InjectionRef = Pick<InjectionRow, "id" | "sessionId" | "directory"> & Partial<Pick<InjectionRow, "server">>;
/** What a state change needs to know of a session's armed countdown. */
export type ArmedRef = Pick<CountdownRow, "id" | "owner" | "leaseUntil">;

/** How an armed countdown ends: cancelled (by activity or a person), closed by a guard at its deadline, or expired. */
export type CountdownEnd =
  | { state: "cancelled"; audit: Extract<AuditEntry, { event: "cancelled" | "skipped" }> }
  | { state: "expired"; audit: Extract<AuditEntry, { event: "expired" }> };

/** An orphaned countdown to take over: ended at once (`end`, when too late) or kept and audited `resumed`. */
export type Adoption = { countdown: CountdownRow } & (
  { end: Extract<CountdownEnd, { state: "expired" }> } | { audit: Extract<AuditEntry, { event: "resumed" }> }
);

/** A continuation of a session that went out (or may have: pending, sent, or uncertain), as a look meets it. */
export interface ContinuationRef {
  injectionId: string;
  firedAt: number;
}

export interface ArmOptions {
  /** Written with the countdown, in its transaction. */
  sessionPatch?: SessionUpdate;
  /** Whether another process's armed countdown is to be left alone (its owner is alive). */
  respect?: (armed: ArmedRef) => boolean;
  /**
   * When the idle this countdown answers was seen: a continuation of the session fired since then (by any process)
   * answered that idle already, and nothing is armed. Checked in the arming's transaction, so that a continuation
   * fired between the look's guards and its arming is not answered twice.
   */
  answeredSince?: number;
}

export interface ArmResult {
  armed: boolean;
  /** The session's armed countdown this one replaced (`cancelled: superseded`). */
  superseded?: ArmedRef;
  /** A live process's countdown that was respected: nothing was armed (`skipped: in_flight`). */
  heldBy?: ArmedRef;
  /** A continuation fired since `answeredSince`: nothing was armed (`skipped: in_flight`). */
  answeredBy?: ContinuationRef;
}

export interface StopResult {
  changed: boolean;
  cancelled?: ArmedRef;
}

/** Why the store does not work right now (the enforcer pauses until it does). */
export type StoreProblem = "read-only" | "full" | "locked" | "damaged" | "gone" | "unavailable";

export interface EngineStore {
  /** Where the data lives, for messages: a file path or a server. */
  readonly location: string;

  // ── reads ───────────────────────────────────────────────────────────────────
  session(sessionId: string): Promise<SessionRow | undefined>;
  countdown(id: string): Promise<CountdownRow | undefined>;
  injection(id: string): Promise<InjectionRow | undefined>;
  hasPendingInjection(sessionId: string): Promise<boolean>;
  /** When a person cancelled the session's countdown with the TUI's key at or after `since` (the latest), if so. */
  userCancelledSince(sessionId: string, since: number): Promise<number | undefined>;
  /** The latest continuation of the session fired at or after `since` and not refused (`failed`), if any. */
  continuedSince(sessionId: string, since: number): Promise<ContinuationRef | undefined>;
  /** Armed countdowns of one scope, earliest deadline first. */
  armedCountdowns(scope: Scope): Promise<CountdownRow[]>;
  /** `pending` injections of a scope, oldest first (the engine decides which of them are orphaned). */
  pendingInjections(scope: Scope): Promise<InjectionRow[]>;
  /** `failed` and `unknown` continuations of a session since `since`, newest first: they may have arrived after all. */
  uncertainInjections(sessionId: string, since: number): Promise<InjectionRow[]>;
  /** Sessions of a scope the enforcer owes a look (`sessions.recheck_at`) that were due by `dueBy`. */
  sessionsToRecheck(scope: Scope, dueBy: number): Promise<Array<{ sessionId: string; recheckAt: number | null }>>;

  // ── state changes ───────────────────────────────────────────────────────────
  /** Applies a change to the session (creating its row if needed) with the audit rows that explain it. */
  changeSession(scope: SessionScope, now: number, change: SessionChange, audit?: AuditEntry[]): Promise<SessionRow>;
  /** A change whose audit and result also depend on the row (a retry plan read off the failure count). */
  settleSession<T extends Settlement>(scope: SessionScope, now: number, settle: (row: SessionRow) => T): Promise<T>;
  /** A decision that changes nothing but the record: its audit row alone. */
  recordDecision(scope: SessionScope, now: number, entry: AuditEntry): Promise<void>;
  /**
   * Arms a countdown, superseding the session's armed one, unless that belongs to another process `respect` says is
   * alive, or a continuation answered the idle already (`answeredSince`): then nothing is armed and the skip
   * (`in_flight`) is audited. `sessionPatch` goes with it either way.
   */
  armCountdown(countdown: NewCountdown, detail: Record<string, unknown>, options?: ArmOptions): Promise<ArmResult>;
  /**
   * Ends the countdown if it is still armed (false when someone else ended it first: then its audit is not written)
   * and applies `change` to the session either way, in one transaction.
   */
  endCountdown(countdown: CountdownRef, end: CountdownEnd, now: number, change?: SessionChange): Promise<boolean>;
  /**
   * A person ended the session's armed countdown (the TUI's key): returns the one ended, if any. Any look the session
   * is owed (`recheck_at`: a failed todo read's retry, by this process or another) goes with it: the key cancels the
   * continuation of this idle, not one countdown of it.
   */
  cancelArmed(scope: SessionScope, now: number, detail: Record<string, unknown>): Promise<ArmedRef | undefined>;
  /** Sets the durable stop and cancels the armed countdown (`stopped`); unchanged when it was already set. */
  setStop(scope: SessionScope, source: StopSource, now: number): Promise<StopResult>;
  /** Lifts the stop and the takeover pause with `patch`, audited `unstopped`; false when there was nothing to lift. */
  resume(scope: SessionScope, source: StopSource, now: number, patch: SessionUpdate): Promise<boolean>;
  /**
   * The exactly-once point: the countdown goes from armed to fired only for its current owner, in the transaction
   * that records the injection `pending`. False: it was cancelled meanwhile or is no longer ours; do not send.
   */
  claimCountdown(injection: NewInjection, detail: Record<string, unknown>): Promise<boolean>;
  /** Takes over orphaned countdowns (each only if its owner is still the one read); true for each one taken. */
  adoptCountdowns(adoptions: Adoption[], owner: string, leaseUntil: number, now: number): Promise<boolean[]>;
  renewLeases(owner: string, leaseUntil: number): Promise<number>;
  /** Hands this owner's countdowns of `scope` back (owner cleared), for a successor to adopt at once. */
  releaseLeases(owner: string, scope: Scope): Promise<number>;
  /** Says this owner is gone (PostgreSQL deletes its heartbeat row), so that nobody waits out its lease. */
  retire(owner: string): Promise<void>;

  // ── liveness ────────────────────────────────────────────────────────────────
  /**
   * Says this owner is alive for another `leaseMs`. SQLite has nothing to write (a live pid on this host says it);
   * PostgreSQL writes a heartbeat row by the database's clock, which fences the claim, and reads who else is alive.
   */
  heartbeat(owner: string, leaseMs: number): Promise<void>;
  /** Whether another owner's lease still holds: respected when arming, waited for before adopting. */
  ownerAlive(owner: string | null, leaseUntil: number | null, now: number): boolean;
  /** Closes a `pending` injection with what `settle` computes from the session row. Undefined if it was not pending. */
  settleInjection<T extends Settlement>(
    injection: InjectionRef,
    status: "sent" | "failed" | "unknown",
    now: number,
    error: string | null,
    settle: (row: SessionRow) => T,
  ): Promise<T | undefined>;
  /** A `failed` or `unknown` injection found in the session after all becomes `sent`. Undefined if it was not. */
  confirmUncertain<T extends Settlement>(
    injection: InjectionRef,
    now: number,
    settle: (row: SessionRow) => T,
  ): Promise<T | undefined>;

  // ── upkeep ──────────────────────────────────────────────────────────────────
  /** Rejects unless a write can be committed right now (without waiting for a lock). */
  probe(): Promise<void>;
  /** The store's own failure behind `error`, or undefined for anything else. */
  problemOf(error: unknown): StoreProblem | undefined;
  /** The data at the configured place is no longer what was opened (a deleted or replaced file). */
  replaced(): boolean;
  /** Deletes settled history older than `cutoff`, in small batches. */
  prune(cutoff: number): Promise<PruneReport>;
  close(): Promise<void>;
}
