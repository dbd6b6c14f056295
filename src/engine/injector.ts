// Prompt calls: one at a time per session (a p-queue each), at most `maxConcurrentInjections` at once in the process
// (one shared p-queue). The injection is recorded `pending` in the same transaction that claims the countdown,
// before OpenCode is called, then `sent`, `failed` or `unknown`. Never twice: whenever a call fails in a way that may
// have left OpenCode accepting it (a timeout, a reset connection, a 5xx), the session's messages are searched for
// the message id before anything else happens; a `pending` row left by a crash is settled the same way.
import PQueue from "p-queue";
import { classifyError } from "../core/errors.js";
import { inspectMessages, type MessageFacts } from "../core/messages.js";
import type { InjectionFailureReason } from "../core/reasons.js";
import { afterInjectionFailed, parsePatch, type RetryPolicy, type SessionPatch } from "../core/transitions.js";
import type { HostPort, LogLevel, PromptRequest } from "../host/port.js";
import type { AuditEntry, NewInjection, Repository, SessionUpdate } from "../store/repository.js";
import type { InjectionRow, SessionRow } from "../store/schema.js";
import type { Clock } from "./clock.js";
import { errorMessage, HostTimeoutError, mayHaveBeenDelivered, withTimeout } from "./host-calls.js";

/** What to do after a failed attempt: arm a retry after `delayMs`, or nothing more. */
export type RetryPlan = { retry: true; attempt: number; delayMs: number } | { retry: false; attempt: number };

export type DeliveryOutcome =
  | { status: "sent"; latencyMs: number }
  /** The claim failed: the countdown was cancelled meanwhile or another process owns it now. Nothing was sent. */
  | { status: "lost" }
  | { status: "failed"; error: string; next: RetryPlan }
  /** The call failed in a way that may have delivered it, and the message could not be found (yet). */
  | { status: "unknown"; error: string; next: RetryPlan };

export interface DeliveryPlan {
  injection: NewInjection;
  request: PromptRequest;
  detail: Record<string, unknown>;
}

export interface InjectorOptions {
  repo: Repository;
  host: HostPort;
  clock: Clock;
  maxConcurrent: number;
  promptTimeoutMs: number;
  hostTimeoutMs: number;
  startTimeoutMs: number;
  policy: RetryPolicy;
  log: (level: LogLevel, message: string, extra?: Record<string, unknown>) => void;
  /** A job threw (the database failing, most likely): the engine decides how to report it. */
  onJobError: (error: unknown) => void;
}

const RECONCILE_WINDOW = 200;
/** OpenCode writes the message of an accepted prompt just after answering; look only once it had time to. */
const LOOKUP_DELAY_MS = 300;
/** How far back an earlier `failed`/`unknown` continuation is still looked for before a new one goes out. */
const UNCERTAIN_WINDOW_MS = 3_600_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The session columns a continuation sets once known to have gone out: its stored counts, one more continuation. */
function wentOut(onSent: string | null | undefined, row: SessionRow): SessionUpdate {
  return { ...parsePatch(onSent), continuations: row.continuations + 1 };
}

export class Injector {
  private readonly global: PQueue;
  private readonly perSession = new Map<string, PQueue>();
  private disposed = false;

  constructor(private readonly o: InjectorOptions) {
    this.global = new PQueue({ concurrency: o.maxConcurrent });
  }

  /** Runs `job` after the session's earlier jobs, within the global cap. Never rejects. */
  run(sessionId: string, job: () => Promise<void>): Promise<void> {
    if (this.disposed) return Promise.resolve();
    let queue = this.perSession.get(sessionId);
    if (!queue) {
      queue = new PQueue({ concurrency: 1 });
      this.perSession.set(sessionId, queue);
      queue.on("idle", () => {
        if (this.perSession.get(sessionId) === queue && queue!.size === 0 && queue!.pending === 0)
          this.perSession.delete(sessionId);
      });
    }
    return queue.add(() => this.global.add(job)).catch((error: unknown) => this.o.onJobError(error));
  }

  /** A continuation of this session is queued or running in this process. */
  isBusy(sessionId: string): boolean {
    const queue = this.perSession.get(sessionId);
    return queue !== undefined && queue.size + queue.pending > 0;
  }

  get inFlight(): number {
    return this.global.pending;
  }

  async deliver(plan: DeliveryPlan): Promise<DeliveryOutcome> {
    const { repo, clock } = this.o;
    const { injection } = plan;
    if (!repo.claimForInjection(injection, plan.detail)) return { status: "lost" };
    const started = clock.monotonic();
    try {
      await withTimeout("prompt", this.o.promptTimeoutMs, (signal) => this.o.host.prompt(plan.request, signal));
    } catch (error) {
      return this.afterCallFailed(plan, error, started);
    }
    return this.recordSent(plan, clock.monotonic() - started, {});
  }

  private async afterCallFailed(plan: DeliveryPlan, error: unknown, started: number): Promise<DeliveryOutcome> {
    const message = errorMessage(error);
    const timeout = error instanceof HostTimeoutError;
    // A full context is not fixed by sending again.
    const final = classifyError({ message }) === "token_limit";
    if (mayHaveBeenDelivered(error)) {
      await sleep(LOOKUP_DELAY_MS);
      const found = await this.lookUp(plan.injection);
      if (found === true)
        return this.recordSent(
          plan,
          this.o.clock.monotonic() - started,
          timeout ? { afterTimeout: true } : { afterError: message },
        );
      // Not found (or not readable): it may still arrive; a retry looks for it again before sending (see confirmEarlier).
      if (timeout || found === undefined)
        return this.recordUncertain(plan, message, timeout ? "timeout" : "retrying", final);
    }
    return this.recordFailed(plan, message, final);
  }

  private recordSent(plan: DeliveryPlan, latencyMs: number, extra: Record<string, unknown>): DeliveryOutcome {
    const { injection } = plan;
    const now = this.o.clock.now();
    this.o.repo.settleInjection(injection, "sent", now, null, (row) => ({
      patch: { ...wentOut(injection.onSent, row), recheckAt: now + this.o.startTimeoutMs },
      audit: [
        {
          event: "injected",
          detail: { injectionId: injection.id, latencyMs: Math.round(latencyMs), ...plan.detail, ...extra },
        },
      ],
    }));
    return { status: "sent", latencyMs };
  }

  private recordFailed(plan: DeliveryPlan, error: string, final: boolean): DeliveryOutcome {
    const now = this.o.clock.now();
    const settled = this.o.repo.settleInjection(plan.injection, "failed", now, error, (row) =>
      this.failure(
        row,
        now,
        final,
        (next) => ({
          event: "injection_failed",
          reason: next.retry ? "retrying" : "gave_up",
          detail: {
            injectionId: plan.injection.id,
            error,
            ...plan.detail,
            ...retryDetail(next),
            ...(final ? { tokenLimit: true } : {}),
          },
        }),
        final ? { tokenLimitAt: now } : {},
      ),
    );
    return { status: "failed", error, next: settled?.next ?? { retry: false, attempt: 0 } };
  }

  /** Possibly delivered: it counts as a continuation (budget, progress ledger) and as an attempt (retries). */
  private recordUncertain(
    plan: DeliveryPlan,
    error: string,
    reason: InjectionFailureReason,
    final: boolean,
  ): DeliveryOutcome {
    const { injection } = plan;
    const now = this.o.clock.now();
    const settled = this.o.repo.settleInjection(injection, "unknown", now, error, (row) =>
      this.failure(
        row,
        now,
        final,
        (next) => ({
          event: "injection_failed",
          reason,
          detail: { injectionId: injection.id, error, ...plan.detail, ...retryDetail(next) },
        }),
        wentOut(injection.onSent, row),
      ),
    );
    return { status: "unknown", error, next: settled?.next ?? { retry: false, attempt: 0 } };
  }

  /** The retry policy applied to the failure count read in the settling transaction. */
  private failure(
    row: SessionRow,
    now: number,
    final: boolean,
    audit: (next: RetryPlan) => AuditEntry,
    extra: SessionPatch = {},
  ): { patch: SessionUpdate; audit: AuditEntry[]; next: RetryPlan } {
    const outcome = afterInjectionFailed(row.consecutiveFailures, now, this.o.policy, final);
    const next: RetryPlan = outcome.retry
      ? { retry: true, attempt: outcome.attempt, delayMs: outcome.delayMs }
      : { retry: false, attempt: outcome.attempt };
    return { patch: { ...extra, ...outcome.patch }, audit: [audit(next)], next };
  }

  /**
   * A sent continuation whose turn never started (OpenCode accepted it and did nothing): an attempt like any failure.
   * Undefined when the injection is no longer `sent` (settled otherwise meanwhile).
   */
  recordNotStarted(
    injection: Pick<InjectionRow, "id" | "sessionId" | "directory">,
    waitedMs: number,
  ): RetryPlan | undefined {
    const now = this.o.clock.now();
    const { repo } = this.o;
    return repo.inTransaction(() => {
      const row = repo.getSession(injection.sessionId);
      if (!row) return undefined;
      const outcome = this.failure(
        row,
        now,
        false,
        (next) => ({
          event: "injection_failed",
          reason: "not_started",
          detail: { injectionId: injection.id, waitedMs: Math.round(waitedMs), ...retryDetail(next) },
        }),
        { recheckAt: null },
      );
      repo.updateSession(injection, outcome.patch, now, outcome.audit);
      return outcome.next;
    });
  }

  /**
   * Settles a `pending` row whose owner is gone: `sent` if its id is in the session's messages, else `unknown` (an
   * attempt, retried by the policy). `deferred` when the messages cannot be read now (the row stays pending).
   */
  async reconcile(
    row: InjectionRow,
  ): Promise<{ status: "sent" } | { status: "unknown"; next: RetryPlan } | { status: "deferred" }> {
    const found = await this.lookUp(row);
    if (found === undefined) {
      this.o.log("warn", "cannot reconcile a pending continuation yet", { injectionId: row.id });
      return { status: "deferred" };
    }
    const now = this.o.clock.now();
    const detail = { injectionId: row.id, countdownId: row.countdownId, owner: row.owner };
    if (found) {
      this.o.repo.settleInjection(row, "sent", now, null, (session) => ({
        patch: wentOut(row.onSent, session),
        audit: [{ event: "reconciled", reason: "found", detail }],
      }));
      return { status: "sent" };
    }
    const settled = this.o.repo.settleInjection(
      row,
      "unknown",
      now,
      "not found in the session after a restart",
      (session) =>
        this.failure(
          session,
          now,
          false,
          (next) => ({ event: "reconciled", reason: "not_found", detail: { ...detail, ...retryDetail(next) } }),
          wentOut(row.onSent, session),
        ),
    );
    return { status: "unknown", next: settled?.next ?? { retry: false, attempt: 0 } };
  }

  /**
   * Before a new continuation goes out: an earlier `failed` or `unknown` one of this session that is in `messages`
   * arrived after all. It becomes `sent` (audit `reconciled: found`); the caller must not send another on top.
   */
  confirmEarlier(sessionId: string, messages: MessageFacts | undefined): InjectionRow | undefined {
    if (!messages) return undefined;
    const now = this.o.clock.now();
    for (const row of this.o.repo.uncertainInjections(sessionId, now - UNCERTAIN_WINDOW_MS)) {
      const arrived =
        (row.messageId !== null && messages.ownMessageIds.includes(row.messageId)) ||
        messages.ownInjectionIds.includes(row.id);
      if (!arrived) continue;
      this.o.repo.confirmUncertain(row, now, (session) => ({
        // An `unknown` one was already counted as a continuation; a `failed` one was not.
        patch: {
          ...(row.status === "failed" ? wentOut(row.onSent, session) : {}),
          consecutiveFailures: 0,
          backoffUntil: null,
        },
        audit: [
          {
            event: "reconciled",
            reason: "found",
            detail: { injectionId: row.id, countdownId: row.countdownId, was: row.status },
          },
        ],
      }));
      return row;
    }
    return undefined;
  }

  /** Resolves when every queued job has finished. */
  async drain(): Promise<void> {
    while (
      this.global.size + this.global.pending > 0 ||
      [...this.perSession.values()].some((q) => q.size + q.pending > 0)
    ) {
      await Promise.all([this.global.onIdle(), ...[...this.perSession.values()].map((q) => q.onIdle())]);
    }
  }

  dispose(): void {
    this.disposed = true;
    this.global.clear();
    for (const queue of this.perSession.values()) queue.clear();
    this.perSession.clear();
  }

  /** True or false when the session's messages could be read; undefined when they could not. */
  private async lookUp(injection: Pick<NewInjection, "id" | "sessionId" | "messageId">): Promise<boolean | undefined> {
    try {
      return await this.findInSession(injection);
    } catch (error) {
      this.o.log("debug", "could not look for a continuation in the session", {
        injectionId: injection.id,
        error: errorMessage(error),
      });
      return undefined;
    }
  }

  /** Our message is the one with the id we chose, or one whose text carries the injection's id. */
  private async findInSession(injection: Pick<NewInjection, "id" | "sessionId" | "messageId">): Promise<boolean> {
    const messages = await withTimeout("messages read", this.o.hostTimeoutMs, (s) =>
      this.o.host.getMessages(injection.sessionId, s, RECONCILE_WINDOW),
    );
    if (!Array.isArray(messages)) throw new Error("the host returned no message list");
    if (injection.messageId && messages.some((m) => m.id === injection.messageId)) return true;
    return inspectMessages(messages).ownInjectionIds.includes(injection.id);
  }
}

function retryDetail(next: RetryPlan): Record<string, unknown> {
  return next.retry ? { attempt: next.attempt, retryInMs: next.delayMs } : { attempt: next.attempt, final: true };
}

export type { PromptRequest };
