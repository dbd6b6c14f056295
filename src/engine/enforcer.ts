// The engine's composition root: it builds the infrastructure and the parts (parts.ts wires them by typed calls), runs
// their lifecycle in a fixed order, and hands OpenCode's events to them. What the engine reports is an engine event
// (engine-events.ts); the API on one session is session-api.ts, what a failing database means is store-pause.ts. The
// path of one idle, part by part, is docs/architecture.md "One idle, from event to prompt call", checked against the
// code by test/docs/idle-walk.test.ts.
import { RESUME_REASON, TAKEOVER_REASON, type StopSource } from "../core/reasons.js";
import type { Config } from "../config/resolve.js";
import type { HostPort } from "../host/port.js";
import type { Allowed, Grant } from "../store/changes/allow.js";
import { describeDatabaseFailure } from "../store/open/failure.js";
import { newOwnerId, registerOwner, unregisterOwner } from "../store/owner.js";
import type { EngineStore } from "../store/port.js";
import type { LeaseRows } from "../store/reads.js";
import { systemClock, type Clock } from "./clock.js";
import { createContext, type EngineContext } from "./context.js";
import { EngineEmitter, logEngineEvents, type EngineEventName, type EngineEvents } from "./engine-events.js";
import { Lifecycle, type Mode } from "./lifecycle.js";
import type { NoticeChannels } from "./notice-sender.js";
import { buildParts, type EngineParts } from "./parts.js";
import { SessionApi, type ContinueLaterAnswer } from "./session-api.js";
import { SessionLanes } from "./session-lanes.js";
import { StoreHealth, type StoreState } from "./store-health.js";
import { StorePause } from "./store-pause.js";
import type { RecoveryReport } from "./wait/countdowns.js";
import { TimerQueue } from "./timer-queue.js";

export type { RecoveryReport };

export interface EnforcerOptions {
  config: Config;
  store: EngineStore;
  host: HostPort;
  /** The OpenCode instance directory whose sessions this engine follows. */
  directory: string;
  /**
   * The OpenCode server they live on, when one database serves several (a fleet's server name, or a plugin's host
   * on PostgreSQL); null or absent: this machine's own. Rows are written, recovered and re-checked in this scope.
   */
  server?: string | null;
  clock?: Clock;
  /**
   * Who owns the countdowns armed here. Given: it belongs to the caller (a fleet replica shares one among the servers
   * it follows), who keeps it alive (its heartbeat), renews its countdowns' leases, drives the lease ticks
   * (`leaseTick`) and says when it is gone; absent: the engine makes its own, keeps it alive, ticks on its own timer
   * and retires it when disposed.
   */
  owner?: string;
  /** Where notices go (the `notify` option's channels, parsed by the adapter); none: nothing is sent. */
  noticeChannels?: NoticeChannels;
}

export interface EnforcerStats {
  mode: Mode;
  eventsIgnored: number;
  armed: number;
  sessionsInMemory: number;
  timers: number;
  /** Why the enforcer is paused, while its database does not work. */
  storeProblem?: StoreState["kind"];
}

export class Enforcer {
  readonly owner: string;
  private readonly ownsOwnerId: boolean;
  private readonly ctx: EngineContext;
  private readonly lifecycle = new Lifecycle<RecoveryReport>();
  private readonly events: EngineEmitter;
  private readonly timers: TimerQueue;
  private readonly lanes: SessionLanes;
  private readonly health: StoreHealth;
  private readonly parts: EngineParts;
  private readonly api: SessionApi;
  /** What a streamed chunk is answered from (handleEvent), held here to spare the hot path a load. */
  private readonly router: EngineParts["router"];

  constructor(options: EnforcerOptions) {
    const { config, store, host } = options;
    const clock = options.clock ?? systemClock;
    this.owner = options.owner ?? newOwnerId();
    this.ownsOwnerId = options.owner === undefined;
    const events = (this.events = new EngineEmitter((event, error) =>
      this.ctx.log("error", `a listener of the engine's ${event} event failed`, {
        error: describeDatabaseFailure(error),
      }),
    ));
    // A failure at a boundary: the store's own pauses the engine (store-pause.ts), anything else is an `error` event.
    const failed = (operation: string, error: unknown) => {
      if (!this.health.report(error)) events.emit("error", { operation, error });
    };
    const timers = (this.timers = new TimerQueue(clock, (key, error) => failed(`timer ${key}`, error)));
    const lanes = (this.lanes = new SessionLanes((error) => failed("session state change", error)));
    let pause: StorePause | undefined;
    this.health = new StoreHealth(
      store,
      timers,
      { paused: (report) => pause?.paused(report), resumed: (report) => pause?.resumed(report) },
      config.storeProbeMs,
      clock,
    );
    const followed = { directory: options.directory, server: options.server ?? null };
    const { owner, lifecycle } = this;
    const ctx = (this.ctx = createContext({
      config,
      followed,
      owner,
      clock,
      store,
      host,
      timers,
      lanes,
      lifecycle,
      events,
      failed,
    }));

    const parts = (this.parts = buildParts(ctx, {
      noticeChannels: options.noticeChannels,
      keepsOwner: this.ownsOwnerId,
    }));
    this.router = parts.router;
    this.api = new SessionApi(ctx, parts);
    pause = new StorePause(ctx, parts);
    logEngineEvents(events, ctx.log, store.location);
  }

  /** Subscribes to what the enforcer reports besides its decisions (see engine-events.ts). */
  on<E extends EngineEventName>(event: E, listener: (payload: EngineEvents[E]) => void): () => void {
    return this.events.on(event, listener);
  }

  // ── lifecycle ─────────────────────────────────────────────────────────────

  /**
   * Starts what runs in the background, in this order: adopt or expire the countdowns left armed in this scope,
   * start the lease loop, reconcile pending injections, look again at the sessions owed a look, schedule retention,
   * start sending the notices due. Every call returns the same start; once disposed it is refused.
   * A step that fails is reported (a failing store pauses the enforcer) and the next one runs.
   */
  start(): Promise<RecoveryReport> {
    return this.lifecycle.start(() => this.startParts());
  }

  private async startParts(): Promise<RecoveryReport> {
    registerOwner(this.owner);
    await this.step("heartbeat", () => this.parts.leases.heartbeat());
    // An engine given its owner follows a server its fleet replica has just taken over: what it finds armed or owed
    // was left by a replica that died, starved or handed the server on, not by this process before a restart, and
    // one too late to fire or look at leaves its session looked at afresh instead of being dropped.
    const reason = this.ownsOwnerId ? RESUME_REASON : TAKEOVER_REASON;
    const nothing: RecoveryReport = { rearmed: 0, fired: 0, expired: 0, foreign: 0 };
    const report = (await this.step("recovery", () => this.parts.countdowns.recover(reason))) ?? nothing;
    await this.parts.leases.start();
    await this.step("reconciliation", () => this.parts.reconciler.reconcilePending());
    // A check its dead process left running is owed a look, which runs it again: before the looks owed are made.
    await this.step("checks", () => this.parts.verifications.recover(reason));
    await this.step("recheck", () => this.parts.looks.recheckOwed("restart", { expireLate: this.ownsOwnerId }));
    const billed = await this.step("billing", () => this.parts.billing.recover());
    await this.parts.retention.start();
    await this.parts.sender.start();
    if (billed) this.ctx.log("info", "turns billed after restart", { billed });
    if (report.rearmed + report.fired + report.expired > 0)
      this.ctx.log("info", "countdowns recovered after restart", { ...report });
    return report;
  }

  /**
   * No new event, decision or timer from now on; once the start under way is over, stops, in this order: the notice
   * sender, the retention schedule and the lease loop, each waiting for its round in flight; the timers and the
   * attempts still queued; then the attempts in flight finish and are recorded, and the armed countdowns are handed
   * back to the database for a successor. The store can be closed once this resolves. Every call returns the same stop.
   */
  dispose(): Promise<void> {
    return this.lifecycle.stop(() => this.stopParts());
  }

  private async stopParts(): Promise<void> {
    await this.parts.sender.stop();
    await this.parts.retention.stop();
    await this.parts.leases.stop();
    this.timers.stop();
    this.parts.queue.stopQueued();
    this.parts.starts.clear();
    // The checks running here are killed and left owed to a successor (settling would wait out their commands).
    await this.step("checks", () => this.parts.verifications.stop(RESUME_REASON));
    await this.settled();
    await this.step("lease release", () => this.parts.countdowns.release());
    if (this.ownsOwnerId) await this.step("retirement", () => this.ctx.store.retire(this.owner));
    this.parts.looks.clear();
    unregisterOwner(this.owner);
  }

  /**
   * One lease tick on the rows of this engine's scope, read by the caller that owns its owner id (a fleet replica reads
   * them for all its servers at once; such an engine has no lease timer of its own). Nothing before the lease loop
   * started, while not deciding, or while its last tick still runs; resolves once the tick has settled.
   */
  leaseTick(rows: LeaseRows): Promise<void> {
    return this.parts.leases.tickOn(rows);
  }

  /** Resolves when every evaluation, state change and attempt started so far has settled (tests and shutdown). */
  async settled(): Promise<void> {
    do {
      await Promise.allSettled([...this.ctx.tracked]);
      await this.lanes.idle();
      await this.parts.queue.drain();
    } while (this.ctx.tracked.size > 0 || this.lanes.size > 0);
  }

  stats(): EnforcerStats {
    return {
      mode: this.lifecycle.mode,
      eventsIgnored: this.parts.router.eventsIgnored,
      armed: this.parts.countdowns.size,
      sessionsInMemory: this.parts.memories.size,
      timers: this.timers.size,
      storeProblem: this.health.state?.kind,
    };
  }

  // ── events ────────────────────────────────────────────────────────────────

  /**
   * One OpenCode bus event. Synchronous and never throws: slow work (reading OpenCode, waiting, writing) continues in
   * the background. The two streaming events return after at most a few Map lookups unless a countdown must end.
   */
  handleEvent(raw: unknown): void {
    if (this.router.changesNothing(raw)) return;
    this.route(raw, this.lifecycle.mode);
  }

  private route(raw: unknown, mode: Mode): void {
    try {
      if (mode === "running") this.router.handle(raw);
      else if (mode === "paused_store") this.router.observe(raw);
    } catch (error) {
      this.ctx.failed("event handling", error);
    }
  }

  /** `tool.execute.before` / `tool.execute.after`: a tool is running, so the session is not idle. */
  toolActivity(sessionId: unknown, phase: "before" | "after"): void {
    if (!this.lifecycle.deciding || typeof sessionId !== "string") return;
    try {
      this.parts.router.toolActivity(sessionId, phase);
    } catch (error) {
      this.ctx.failed("tool activity handling", error);
    }
  }

  /**
   * After a gap in the event stream (the standalone service reconnecting), what memory holds about live state may be
   * stale: forget it, so decisions rely on OpenCode's answers until events arrive again.
   */
  eventsMayHaveBeenMissed(): void {
    this.parts.router.forgetLiveState();
  }

  // ── the programmatic API ──────────────────────────────────────────────────

  markRecovering(sessionId: string): void {
    this.api.markRecovering(sessionId);
  }

  markRecoveryComplete(sessionId: string): void {
    this.api.markRecoveryComplete(sessionId);
  }

  /** See SessionApi.stop: resolves with false when already stopped, rejects when the stop could not be written. */
  stop(sessionId: string, source: StopSource = "api"): Promise<boolean> {
    return this.api.stop(sessionId, source);
  }

  /** See SessionApi.resume: lifts the stop and a takeover pause, and looks at the session again at once. */
  resume(sessionId: string, source: StopSource = "api"): Promise<boolean> {
    return this.api.resume(sessionId, source);
  }

  /** See SessionApi.allow: more budget for the session; a budget stop lifted, and the session looked at at once. */
  allow(sessionId: string, grant: Grant = {}, source: StopSource = "api"): Promise<Allowed> {
    return this.api.allow(sessionId, grant, source);
  }

  /** See SessionApi.continueLater: the agent's own park, until the time it asked for or its check passes, or why not. */
  continueLater(sessionId: string, args: unknown, agent?: string): Promise<ContinueLaterAnswer> {
    return this.api.continueLater(sessionId, args, agent);
  }

  /** Evaluates a session as if it had just gone idle (after a reconnect, a resume, or a lost injection). */
  reevaluate(sessionId: string): Promise<void> {
    return this.api.reevaluate(sessionId);
  }

  // ── reporting ─────────────────────────────────────────────────────────────

  /** A step of start or stop: a failure is reported (a failing store pauses the enforcer) and the next step runs. */
  private async step<T>(what: string, work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work();
    } catch (error) {
      this.ctx.failed(what, error);
      return undefined;
    }
  }
}
