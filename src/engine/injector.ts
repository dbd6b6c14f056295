// Prompt calls: one at a time per session (a p-queue each), at most `maxConcurrentInjections` at once in the process
// (one shared p-queue). The injection is recorded `pending` in the same transaction that claims the countdown,
// before OpenCode is called, then `sent`, `failed` or `unknown`. A `pending` row left by a crash is reconciled by
// looking for its id in the session's messages, never by sending again blindly.
import PQueue from "p-queue";
import { inspectMessages } from "../core/messages.js";
import type { HostPort, LogLevel, PromptRequest } from "../host/port.js";
import type { AuditEntry, NewInjection, Repository, SessionUpdate } from "../store/repository.js";
import type { InjectionRow, SessionRow } from "../store/schema.js";
import type { Clock } from "./clock.js";
import { errorMessage, HostTimeoutError, withTimeout } from "./host-calls.js";

export type DeliveryOutcome =
  | { status: "sent"; latencyMs: number }
  /** The claim failed: the countdown was cancelled meanwhile or another process owns it now. Nothing was sent. */
  | { status: "lost" }
  | { status: "failed"; error: string }
  /** The call timed out and the message could not be found: it may or may not have arrived. */
  | { status: "unknown"; error: string };

export interface DeliveryPlan {
  injection: NewInjection;
  request: PromptRequest;
  /** Written with `sent`. */
  sessionPatchOnSent: (row: SessionRow) => SessionUpdate;
  detail: Record<string, unknown>;
}

export interface InjectorOptions {
  repo: Repository;
  host: HostPort;
  clock: Clock;
  maxConcurrent: number;
  promptTimeoutMs: number;
  hostTimeoutMs: number;
  log: (level: LogLevel, message: string, extra?: Record<string, unknown>) => void;
  /** A job threw (the database failing, most likely): the engine decides how to report it. */
  onJobError: (error: unknown) => void;
}

const RECONCILE_WINDOW = 200;

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
        if (this.perSession.get(sessionId) === queue && queue!.size === 0 && queue!.pending === 0) this.perSession.delete(sessionId);
      });
    }
    return queue
      .add(() => this.global.add(job))
      .catch((error: unknown) => this.o.onJobError(error));
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
      const message = errorMessage(error);
      if (error instanceof HostTimeoutError && (await this.wasDelivered(injection))) {
        return this.finishSent(plan, clock.monotonic() - started, { afterTimeout: true });
      }
      if (error instanceof HostTimeoutError) {
        repo.finishInjection(injection, "unknown", clock.now(), message, [
          { event: "injection_failed", reason: "timeout", detail: { injectionId: injection.id, error: message, ...plan.detail } },
        ]);
        return { status: "unknown", error: message };
      }
      return { status: "failed", error: message };
    }
    return this.finishSent(plan, clock.monotonic() - started, {});
  }

  /** Records the failure decided by the engine (it knows the retry policy). */
  recordFailure(plan: DeliveryPlan, error: string, audit: AuditEntry, sessionPatch: SessionUpdate): void {
    this.o.repo.finishInjection(plan.injection, "failed", this.o.clock.now(), error, [audit], () => sessionPatch);
  }

  /**
   * Settles a `pending` row whose owner is gone: `sent` if its id is in the session's messages, else `unknown`.
   * `deferred` when the messages cannot be read now (the row stays pending and is tried again later).
   */
  async reconcile(row: InjectionRow): Promise<"sent" | "unknown" | "deferred"> {
    let found: boolean;
    try {
      found = await this.findInSession(row);
    } catch (error) {
      this.o.log("warn", "cannot reconcile a pending continuation yet", { injectionId: row.id, error: errorMessage(error) });
      return "deferred";
    }
    const status = found ? "sent" : "unknown";
    this.o.repo.finishInjection(
      row,
      status,
      this.o.clock.now(),
      found ? null : "not found in the session after a restart",
      [{ event: "reconciled", reason: found ? "found" : "not_found", detail: { injectionId: row.id, countdownId: row.countdownId, owner: row.owner } }],
      found ? (s) => ({ continuations: s.continuations + 1, consecutiveFailures: 0, backoffUntil: null }) : undefined,
    );
    return status;
  }

  /** Resolves when every queued job has finished. */
  async drain(): Promise<void> {
    while (this.global.size + this.global.pending > 0 || [...this.perSession.values()].some((q) => q.size + q.pending > 0)) {
      await Promise.all([this.global.onIdle(), ...[...this.perSession.values()].map((q) => q.onIdle())]);
    }
  }

  dispose(): void {
    this.disposed = true;
    this.global.clear();
    for (const queue of this.perSession.values()) queue.clear();
    this.perSession.clear();
  }

  private finishSent(plan: DeliveryPlan, latencyMs: number, extra: Record<string, unknown>): DeliveryOutcome {
    const { injection } = plan;
    this.o.repo.finishInjection(
      injection,
      "sent",
      this.o.clock.now(),
      null,
      [{ event: "injected", detail: { injectionId: injection.id, latencyMs: Math.round(latencyMs), ...plan.detail, ...extra } }],
      plan.sessionPatchOnSent,
    );
    return { status: "sent", latencyMs };
  }

  private async wasDelivered(injection: NewInjection): Promise<boolean> {
    try {
      return await this.findInSession(injection);
    } catch {
      return false;
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
