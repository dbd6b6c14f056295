// The engine's composition root and its public face. It builds the parts — each on parts built before it, never on
// one built after — says who listens to the engine events through which the later parts are reached, runs their
// lifecycle in a fixed order, and offers the programmatic API. One idle, event to prompt call (README "Layout"):
//   see/event-router → decide/looks → decide/judge (core/decide) → wait/countdowns.arm → wait/timer-queue
//   → countdown_due → deliver/injector → wait/countdowns.claim → the host's prompt → deliver/outcomes
import { RESUME_REASON, STORE_RECOVERED_REASON, type StopSource } from "../core/reasons.js";
import type { Config } from "../config.js";
import type { HostPort } from "../host/port.js";
import { resume as resumeChange } from "../store/changes/resume.js";
import { stop as stopChange } from "../store/changes/stop.js";
import { idOf } from "../core/fields.js";
import { newOwnerId, registerOwner, unregisterOwner } from "../store/owner.js";
import type { EngineStore, SessionScope } from "../store/port.js";
import { BoundedMap } from "./bounded-map.js";
import { systemClock, type Clock } from "./clock.js";
import { createContext, type EngineContext } from "./context.js";
import { FactGatherer } from "./decide/facts.js";
import { Judge } from "./decide/judge.js";
import { Looks } from "./decide/looks.js";
import { StopNotices } from "./decide/stop-notices.js";
import { Injector } from "./deliver/injector.js";
import { Lookups } from "./deliver/lookups.js";
import { Outcomes } from "./deliver/outcomes.js";
import { DeliveryQueue } from "./deliver/queue.js";
import { Reconciler } from "./deliver/reconciler.js";
import { StartWatch } from "./deliver/start-watch.js";
import { EngineEmitter, logEngineEvents, type EngineEventName, type EngineEvents } from "./engine-events.js";
import { LeaseLoop } from "./lease-loop.js";
import { Lifecycle, type Mode } from "./lifecycle.js";
import { RetentionSchedule } from "./retention-schedule.js";
import { EventRouter } from "./see/event-router.js";
import { SessionMemories } from "./see/session-memory.js";
import { SessionLanes } from "./session-lanes.js";
import { StoreHealth, type StoreState } from "./store-health.js";
import { CountdownToasts } from "./wait/countdown-toasts.js";
import { Countdowns, type RecoveryReport } from "./wait/countdowns.js";
import { TimerQueue } from "./wait/timer-queue.js";

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
   * it follows), who says when it is gone; absent: the engine makes its own and retires it when disposed.
   */
  owner?: string;
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

const MEMORY_CAP = 5000;

export class Enforcer {
  readonly owner: string;
  private readonly ownsOwnerId: boolean;
  private readonly ctx: EngineContext;
  private readonly lifecycle = new Lifecycle();
  private readonly events = new EngineEmitter();
  private readonly timers: TimerQueue;
  private readonly lanes: SessionLanes;
  private readonly health: StoreHealth;
  private readonly queue: DeliveryQueue;
  private readonly countdowns: Countdowns;
  private readonly toasts: CountdownToasts;
  private readonly starts: StartWatch;
  private readonly memories: SessionMemories;
  private readonly reconciler: Reconciler;
  private readonly injector: Injector;
  private readonly looks: Looks;
  private readonly router: EventRouter;
  private readonly retention: RetentionSchedule;
  private readonly leases: LeaseLoop;
  private starting: Promise<RecoveryReport> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(options: EnforcerOptions) {
    const { config, store, host } = options;
    const clock = options.clock ?? systemClock;
    const events = this.events;
    this.owner = options.owner ?? newOwnerId();
    this.ownsOwnerId = options.owner === undefined;
    // Failures anywhere are reported as engine events: a store's own pauses the engine (see below), the rest is logged.
    const failed = (operation: string, error: unknown) => events.emit("failure", { operation, error });
    const timers = (this.timers = new TimerQueue(clock, (key, error) => failed(`timer ${key}`, error)));
    const lanes = (this.lanes = new SessionLanes((error) => failed("session state change", error)));
    this.health = new StoreHealth(store, timers, events, config.storeProbeMs, clock);
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
    }));

    // The parts, each on parts built before it.
    const queue = (this.queue = new DeliveryQueue(config.maxConcurrentInjections, (e) => failed("continuation", e)));
    const countdowns = (this.countdowns = new Countdowns(ctx));
    this.toasts = new CountdownToasts(ctx, countdowns);
    const facts = new FactGatherer(host, config.hostTimeoutMs, () => clock.monotonic());
    const notices = new StopNotices(ctx);
    const outcomes = new Outcomes(ctx, countdowns, notices);
    const starts = (this.starts = new StartWatch(ctx, facts, outcomes));
    const pinned = (id: string) => countdowns.has(id) || queue.isBusy(id) || starts.has(id);
    const memories = (this.memories = new SessionMemories(MEMORY_CAP, pinned));
    const judge = new Judge(ctx, memories, queue, notices);
    const lookups = new Lookups(ctx);
    const reconciler = (this.reconciler = new Reconciler(ctx, lookups, outcomes, queue));
    const ownMessages = new BoundedMap<string, true>(1000);
    const injected = { memories, queue, countdowns, judge, facts, lookups, reconciler, outcomes, starts, ownMessages };
    this.injector = new Injector(ctx, injected);
    const looks = (this.looks = new Looks(ctx, { memories, countdowns, judge, facts, queue, starts }));
    const isOwnMessage = (id: string) => ownMessages.has(id);
    this.router = new EventRouter(ctx, { memories, countdowns, looks, starts, isOwnMessage }, clock.now());
    this.retention = new RetentionSchedule(ctx);
    this.leases = new LeaseLoop(ctx, { countdowns, reconciler, looks });

    // What flows back to parts built later: the engine events, and who listens to them.
    logEngineEvents(events, ctx.log, store.location);
    events.on("failure", ({ operation, error }) => {
      if (!this.health.report(error)) events.emit("error", { operation, error });
    });
    events.on("countdown_armed", ({ armed }) => this.toasts.show(armed));
    events.on("countdown_due", ({ armed, info }) => this.injector.due(armed, info));
    events.on("look_again", ({ sessionId }) => void looks.evaluate(sessionId, "reevaluate"));
    events.on("store_paused", () => this.pauseForStore());
    events.on("store_resumed", () => this.resumeAfterStore());
  }

  /** Subscribes to what the enforcer reports besides its decisions (see engine-events.ts). */
  on<E extends EngineEventName>(event: E, listener: (payload: EngineEvents[E]) => void): () => void {
    return this.events.on(event, listener);
  }

  // ── lifecycle ─────────────────────────────────────────────────────────────

  /**
   * Starts what runs in the background, in this order: adopt or expire the countdowns left armed in this scope,
   * start the lease loop, reconcile pending injections, look again at the sessions owed a look, schedule retention.
   * Idempotent. A step that fails is reported (a failing store pauses the enforcer) and the next one runs.
   */
  start(): Promise<RecoveryReport> {
    this.starting ??= this.doStart();
    return this.starting;
  }

  private async doStart(): Promise<RecoveryReport> {
    let report: RecoveryReport = { rearmed: 0, fired: 0, expired: 0, foreign: 0 };
    if (this.lifecycle.ending) return report;
    registerOwner(this.owner);
    await this.step("heartbeat", () => this.leases.heartbeat());
    report = (await this.step("recovery", () => this.countdowns.recover(RESUME_REASON))) ?? report;
    this.leases.start();
    await this.step("reconciliation", () => this.reconciler.reconcilePending());
    await this.step("recheck", () => this.looks.recheckOwed("restart"));
    this.retention.start();
    if (report.rearmed + report.fired + report.expired > 0)
      this.ctx.log("info", "countdowns recovered after restart", { ...report });
    return report;
  }

  /**
   * Stops, in this order: no new event, timer or attempt; the attempts in flight finish and are recorded; the armed
   * countdowns are handed back to the database for a successor. The store can be closed once this resolves.
   * Idempotent.
   */
  dispose(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    this.lifecycle.enter("disposing");
    this.leases.stop();
    this.timers.stop();
    this.queue.stopQueued();
    this.starts.clear();
    await this.starting?.catch(() => undefined);
    await this.settled();
    await this.step("lease release", () => this.countdowns.release());
    if (this.ownsOwnerId) await this.step("retirement", () => this.ctx.store.retire(this.owner));
    this.looks.clear();
    unregisterOwner(this.owner);
    this.lifecycle.enter("disposed");
  }

  /** Resolves when every evaluation, state change and attempt started so far has settled (tests and shutdown). */
  async settled(): Promise<void> {
    do {
      await Promise.allSettled([...this.ctx.tracked]);
      await this.lanes.idle();
      await this.queue.drain();
    } while (this.ctx.tracked.size > 0 || this.lanes.size > 0);
  }

  stats(): EnforcerStats {
    return {
      mode: this.lifecycle.mode,
      eventsIgnored: this.router.eventsIgnored,
      armed: this.countdowns.size,
      sessionsInMemory: this.memories.size,
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
    const mode = this.lifecycle.mode;
    // A streamed chunk with nothing counting down and no user message held changes nothing: answered here, in a
    // function small enough (no call, no try/catch) for the JIT to inline into OpenCode's call of the hook.
    if (mode === "running" && this.countdowns.size === 0) {
      const type = (raw as { type?: unknown } | null)?.type;
      if (type === "message.part.delta") return;
      if (type === "message.part.updated" && this.router.userMessages.held === 0) return;
    }
    this.route(raw, mode);
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
      this.router.toolActivity(sessionId, phase);
    } catch (error) {
      this.ctx.failed("tool activity handling", error);
    }
  }

  /**
   * After a gap in the event stream (the standalone service reconnecting), what memory holds about live state may be
   * stale: forget it, so decisions rely on OpenCode's answers until events arrive again.
   */
  eventsMayHaveBeenMissed(): void {
    this.router.forgetLiveState();
  }

  // ── the programmatic API ──────────────────────────────────────────────────

  markRecovering(sessionId: string): void {
    if (!this.validSession("markRecovering", sessionId) || !this.lifecycle.deciding) return;
    const since = this.ctx.clock.now();
    void this.countdowns.cancel(sessionId, "recovering", { source: "api" }, { recoveringSince: since });
  }

  markRecoveryComplete(sessionId: string): void {
    if (!this.validSession("markRecoveryComplete", sessionId) || !this.lifecycle.deciding) return;
    void this.ctx.changeSession(sessionId, { recoveringSince: null });
  }

  /**
   * Sets the durable stop (and cancels an armed countdown). Resolves with false when the session was already
   * stopped; rejects when the stop could not be written (also reported as an `error` event).
   */
  async stop(sessionId: string, source: StopSource = "api"): Promise<boolean> {
    this.requireSession("stop", sessionId);
    const { changed, cancelled } = await this.change("stop", sessionId, (scope, now) =>
      this.ctx.store.change(stopChange(scope, source, now)),
    );
    if (cancelled) this.countdowns.letGo(sessionId, cancelled.id);
    return changed;
  }

  /**
   * An explicit resume: lifts the durable stop and a takeover pause, starts the loop protections over, and looks at
   * the session again at once. Resolves with false when there was nothing to lift or reset; rejects when it could
   * not be written.
   */
  async resume(sessionId: string, source: StopSource = "api"): Promise<boolean> {
    this.requireSession("resume", sessionId);
    const changed = await this.change("resume", sessionId, (scope, now) =>
      this.ctx.store.change(resumeChange(scope, source, now)),
    );
    // A command's own turn makes the session busy first; its idle is evaluated then. The API and the CLI look now.
    if (changed && source !== "command") void this.looks.evaluate(sessionId, "resume");
    return changed;
  }

  /** Evaluates a session as if it had just gone idle (after a reconnect, a resume, or a lost injection). */
  reevaluate(sessionId: string): Promise<void> {
    if (!this.validSession("reevaluate", sessionId)) return Promise.resolve();
    return this.looks.evaluate(sessionId, "reevaluate");
  }

  private async change<T>(what: string, sessionId: string, write: (scope: SessionScope, now: number) => Promise<T>) {
    if (this.lifecycle.ending) throw new Error(`todo-continuation cannot ${what}: it is stopped`);
    try {
      return await this.lanes.run(sessionId, () => write(this.ctx.scope(sessionId), this.ctx.clock.now()));
    } catch (error) {
      this.ctx.failed(what, error);
      throw error;
    }
  }

  /** A missing or empty session id is refused, never applied to some session (peers continued the wrong one). */
  private validSession(what: string, sessionId: unknown): sessionId is string {
    if (idOf(sessionId) !== undefined && (sessionId as string).trim() !== "") return true;
    this.ctx.log("warn", `${what} ignored: no session id (or one no OpenCode session can have)`);
    return false;
  }

  private requireSession(what: string, sessionId: unknown): asserts sessionId is string {
    if (!this.validSession(what, sessionId)) throw new TypeError(`todo-continuation ${what}: not a session id`);
  }

  // ── the store failing and working again ───────────────────────────────────

  /** The database failed: drop in-memory countdowns (their rows stay ours and are adopted again on recovery). */
  private pauseForStore(): void {
    if (this.lifecycle.mode !== "running") return;
    this.lifecycle.enter("paused_store");
    this.countdowns.dropAll();
    this.router.userMessages.drop();
  }

  private resumeAfterStore(): void {
    if (this.lifecycle.mode !== "paused_store") return;
    this.lifecycle.enter("running");
    void this.ctx.track(
      this.countdowns.recover(STORE_RECOVERED_REASON).then((report) => {
        // After the countdowns are held again: a look at a session whose countdown survived finds it armed here.
        this.looks.lookAgainAtUnjudged();
        return report;
      }),
    );
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
