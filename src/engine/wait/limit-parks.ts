// A provider's limit, waited out by a park (docs/waiting.md). A turn that failed on a limit that lifts by itself parks
// its session until it lifts (the reset the provider named, else a backoff), plus the session's stagger. While
// OpenCode waits to retry by itself (status `retry`), its wait is only recorded as a park, so that a restart of
// OpenCode does not lose it: the park wakes the session if OpenCode is no longer there to retry, and ends quietly
// (`unparked`, reason `expired`) when OpenCode's own retry starts.
import type { ErrorReport } from "../../core/errors.js";
import { staggerOf } from "../../core/limits/limit-park.js";
import { readLimit } from "../../core/limits/read-limit.js";
import type { RetryStatus } from "../../core/events.js";
import { park } from "../../store/changes/park.js";
import { parkForLimit } from "../../store/changes/park-limit.js";
import { unpark } from "../../store/changes/unpark.js";
import { lastParkOf } from "../../store/reads.js";
import type { EngineContext } from "../context.js";
import { newId } from "../ids.js";

/**
 * OpenCode's shorter waits (its own backoff of 2 s, 4 s, 8 s… on a server error) are not recorded: a restart inside
 * one loses seconds, and a park for each would write twice per attempt.
 */
export const RETRY_PARK_MIN_MS = 15_000;

/**
 * How far OpenCode's clock (a failed message's time) may run ahead of the enforcer's (a park's time) with a park still
 * taken as made for that failure: a fleet follows servers on other machines.
 */
const CLOCK_MARGIN_MS = 60_000;

/** The zone a reset time said without one is read in: the machine's, where the person reads the message. */
const LOCAL_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

export class LimitParks {
  /** Sessions whose OpenCode retry this process recorded as a park (their busy ends it). */
  private readonly retrying = new Set<string>();

  constructor(private readonly ctx: EngineContext) {}

  private get options() {
    const { maxParkHours, wakeJitterSeconds } = this.ctx.config;
    return { maxParkHours, wakeJitterSeconds };
  }

  /** A turn failed on a limit (`session.error` of kind `limit`): its error recorded and the session parked. */
  limitMet(sessionId: string, error: ErrorReport): Promise<unknown> {
    this.retrying.delete(sessionId);
    return this.ctx.lanes.post(sessionId, () => this.park(sessionId, error));
  }

  /**
   * A look found the session's last turn failed on a limit (its messages keep the error) that no park answered since:
   * its `session.error` never reached this process (it came before a takeover, a restart, a reconnect). Parked as the
   * event would have parked it, in the look's lane; true when it was. `failedAt`: the failed message's time.
   */
  async limitSeenInMessages(sessionId: string, error: ErrorReport, failedAt: number | undefined): Promise<boolean> {
    const last = await this.ctx.store.read(lastParkOf(sessionId));
    if (last && (failedAt === undefined || last.parkedAt + CLOCK_MARGIN_MS >= failedAt)) return false;
    return this.park(sessionId, error);
  }

  private async park(sessionId: string, error: ErrorReport): Promise<boolean> {
    const { ctx } = this;
    const now = ctx.clock.now();
    const evidence = {
      message: error.message,
      statusCode: error.statusCode,
      headers: error.responseHeaders,
      body: error.responseBody,
    };
    const reading = readLimit(evidence, now, { localZone: LOCAL_ZONE });
    const met = { id: newId("park"), error, reading, options: this.options };
    const result = await ctx.store.change(parkForLimit(ctx.scope(sessionId), met, ctx.clock.now()));
    if (result.parked) ctx.events.emit("session_parked", { sessionId, reason: "limit", until: result.until });
    return result.parked;
  }

  /** OpenCode waits to retry: a wait long enough to matter is recorded as a park until OpenCode's next try. */
  retryScheduled(sessionId: string, retry: RetryStatus): Promise<unknown> | undefined {
    const { ctx } = this;
    const now = ctx.clock.now();
    if (retry.next === undefined || retry.next - now < RETRY_PARK_MIN_MS) return undefined;
    const wakeAt = retry.next + staggerOf(sessionId, this.options.wakeJitterSeconds * 1000);
    const detail = { attempt: retry.attempt ?? null, next: retry.next, message: retry.message?.slice(0, 300) ?? null };
    this.retrying.add(sessionId);
    return ctx.lanes.post(sessionId, async () => {
      const request = { id: newId("park"), reason: "opencode_retry" as const, wakeAt, detail };
      const result = await ctx.store.change(park(ctx.scope(sessionId), request, ctx.clock.now()));
      if (result.parked) ctx.events.emit("session_parked", { sessionId, reason: "opencode_retry", until: wakeAt });
    });
  }

  /** The session's turn runs again: OpenCode's retry started, and the wait recorded for it is over. */
  turnRunning(sessionId: string): Promise<unknown> | undefined {
    if (!this.retrying.delete(sessionId)) return undefined;
    const { ctx } = this;
    return ctx.lanes.post(sessionId, () =>
      ctx.store.change(unpark(ctx.scope(sessionId), "expired", ctx.clock.now(), "opencode_retry")),
    );
  }
}
