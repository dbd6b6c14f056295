// What became of a continuation, recorded (store/changes/record-outcome.ts builds every outcome's row), and what the
// engine does next: the retry the plan asks for (a countdown armed for when its backoff ends, unless something newer
// counts down already), or, when it gave up, the one notice that says so.
import type { RetryPlan } from "../../core/injection-outcome.js";
import type { TodoSummary } from "../../core/todos.js";
import { recordOutcome, type Outcome, type OutcomeOf, type Recorded } from "../../store/changes/record-outcome.js";
import { BoundedMap } from "../bounded-map.js";
import type { EngineContext } from "../context.js";
import type { StopNotices } from "../decide/stop-notices.js";
import type { Countdowns } from "../wait/countdowns.js";

export type { Outcome, OutcomeOf };

/** Why the retry was armed, for its `armed` row. */
export interface RetryCause {
  retryOf: string;
  reason: "backoff" | "not_started" | "not_found";
}

export class Outcomes {
  /** Continuations already counted as never started (each counts once). */
  private readonly notStartedSeen = new BoundedMap<string, true>(1000);

  constructor(
    private readonly ctx: EngineContext,
    private readonly countdowns: Countdowns,
    private readonly notices: StopNotices,
  ) {}

  /** Records `outcome`; undefined when it had been recorded already (by this process or another). */
  record(of: OutcomeOf, outcome: Outcome): Promise<Recorded | undefined> {
    return this.ctx.store.change(recordOutcome(of, outcome, this.ctx.clock.now(), this.ctx.config));
  }

  /** Arms the retry the plan asks for (unless something newer counts down already), or tells the user it gave up. */
  async retry(sessionId: string, next: RetryPlan, summary: TodoSummary | undefined, cause: RetryCause): Promise<void> {
    if (this.ctx.lifecycle.stopAsked) return;
    if (!next.retry) return this.notices.tell(sessionId, "gave_up", { failures: next.attempt }, summary);
    if (this.countdowns.has(sessionId)) return;
    const { attempt, delayMs } = next;
    await this.countdowns.arm({ sessionId, summary, attempt, delayMs, detail: { ...cause } });
  }

  /**
   * A sent continuation whose turn never started (OpenCode accepted it and did nothing): an attempt like any failure.
   * Counted once per injection. Runs in the session's lane.
   */
  async notStarted(sessionId: string, injectionId: string, waitedMs: number): Promise<void> {
    if (!this.firstNotStarted(injectionId)) return;
    const recorded = await this.record(
      { ...this.ctx.scope(sessionId), id: injectionId },
      { kind: "not_started", waitedMs },
    );
    this.ctx.log("warn", "continuation accepted but its turn never started", {
      sessionId,
      injectionId,
      waitedMs: Math.round(waitedMs),
    });
    const next = recorded?.next ?? { retry: false, attempt: 0 };
    await this.retry(sessionId, next, undefined, { retryOf: injectionId, reason: "not_started" });
  }

  /** Whether this injection was already counted as never started. */
  countedNotStarted(injectionId: string): boolean {
    return this.notStartedSeen.has(injectionId);
  }

  private firstNotStarted(injectionId: string): boolean {
    if (this.notStartedSeen.has(injectionId)) return false;
    this.notStartedSeen.set(injectionId, true);
    return true;
  }
}
