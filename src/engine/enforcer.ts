// The engine's composition root and its public face. It builds the parts (one owner each: countdowns, the evaluator,
// the injector, the event router), runs their lifecycle in a fixed order, and offers the programmatic API. The walk
// of one idle reads straight through the parts (README "Layout"):
//   event-router.ts → evaluator.ts → decisions.ts (core/decide.ts) → countdowns.ts:arm → timer-queue.ts
//   → countdowns.ts:due → injector.ts:attempt → countdowns.ts:claim → host prompt
import { RESUME_REASON, STORE_RECOVERED_REASON, TAKEOVER_REASON, type StopSource } from "../core/reasons.js";
import { changeSession } from "../store/changes/change-session.js";
import { resume as resumeChange } from "../store/changes/resume.js";
import { stop as stopChange } from "../store/changes/stop.js";
import type { Config } from "../config.js";
import type { HostPort, LogLevel } from "../host/port.js";
import type { EngineStore, Scope, SessionChange, SessionScope } from "../store/port.js";
import { systemClock, type Clock } from "./clock.js";
import type { EngineContext } from "./context.js";
import { CountdownToasts } from "./countdown-toasts.js";
import { Countdowns, type RecoveryReport } from "./countdowns.js";
import { Decisions } from "./decisions.js";
import { EngineEmitter, logEngineEvents, type EngineEventName, type EngineEvents } from "./engine-events.js";
import { Evaluator } from "./evaluator.js";
import { EventRouter } from "./event-router.js";
import { FactGatherer } from "./facts.js";
import { Injector } from "./injector.js";
import { Lifecycle, type Mode } from "./lifecycle.js";
import { idOf } from "../core/fields.js";
import { newOwnerId, registerOwner, unregisterOwner } from "../store/owner.js";
import { RetentionSchedule } from "./retention-schedule.js";
import { SessionLanes } from "./session-lanes.js";
import { SessionMemories } from "./session-memory.js";
import { StopNotices } from "./stop-notices.js";
import { StoreHealth, type StoreState } from "./store-health.js";
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
  private readonly memories: SessionMemories;
  private readonly health: StoreHealth;
  private readonly countdowns: Countdowns;
  private readonly toasts: CountdownToasts;
  private readonly injector: Injector;
  private readonly evaluator: Evaluator;
  private readonly router: EventRouter;
  private readonly retention: RetentionSchedule;
  private readonly tasks = new Set<Promise<unknown>>();
  private leaseTimer: ReturnType<typeof setInterval> | undefined;
  /** A lease tick still running when the next is due is not doubled. */
  private leaseTickRunning = false;
  /** The heartbeat being written, if one is: a slow one is not doubled either. */
  private beating: Promise<void> | undefined;
  private starting: Promise<RecoveryReport> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(options: EnforcerOptions) {
    const { config, store, host, directory } = options;
    const followed: Scope = { directory, server: options.server ?? null };
    const clock = options.clock ?? systemClock;
    this.owner = options.owner ?? newOwnerId();
    this.ownsOwnerId = options.owner === undefined;
    this.timers = new TimerQueue(clock, (key, error) => this.failed(`timer ${key}`, error));
    this.lanes = new SessionLanes((error) => this.failed("session state change", error));
    this.memories = new SessionMemories(
      MEMORY_CAP,
      (id) => this.countdowns.has(id) || this.injector.isBusy(id) || this.injector.starts.has(id),
    );
    const ctx: EngineContext = {
      config,
      followed,
      owner: this.owner,
      clock,
      store,
      host,
      timers: this.timers,
      lanes: this.lanes,
      memories: this.memories,
      lifecycle: this.lifecycle,
      scope: (sessionId): SessionScope => ({ sessionId, ...followed }),
      changeSession: (sessionId: string, change: SessionChange) => {
        const now = clock.now();
        return this.lanes.post(sessionId, () => store.change(changeSession({ sessionId, ...followed }, now, change)));
      },
      log: (level, message, extra) => this.log(level, message, extra),
      failed: (operation, error) => this.failed(operation, error),
      track: (job) => this.track(job),
    };
    this.ctx = ctx;
    const notices = new StopNotices(ctx);
    const facts = new FactGatherer(host, config.hostTimeoutMs, () => clock.monotonic());
    this.countdowns = new Countdowns(ctx, {
      onDue: (armed, info) => this.injector.due(armed, info),
      onWaiting: (armed) => this.toasts.show(armed),
    });
    this.toasts = new CountdownToasts(ctx, this.countdowns);
    const decisions = new Decisions(ctx, notices, (id) => this.injector.isBusy(id));
    this.injector = new Injector(ctx, {
      countdowns: this.countdowns,
      decisions,
      facts,
      notices,
      lookAgain: (sessionId) => void this.evaluator.evaluate(sessionId, "reevaluate"),
    });
    this.evaluator = new Evaluator(ctx, { countdowns: this.countdowns, decisions, facts, injector: this.injector });
    this.router = new EventRouter(
      ctx,
      { countdowns: this.countdowns, evaluator: this.evaluator, injector: this.injector },
      clock.now(),
    );
    this.retention = new RetentionSchedule(ctx);
    this.health = new StoreHealth(store, this.timers, this.events, config.storeProbeMs, clock);
    logEngineEvents(this.events, (level, message, extra) => this.log(level, message, extra), store.location);
    this.events.on("store_paused", () => this.pauseForStore());
    this.events.on("store_resumed", () => this.resumeAfterStore());
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
    await this.step("heartbeat", () => this.ctx.store.heartbeat(this.owner, this.ctx.config.leaseMs));
    report = (await this.step("recovery", () => this.countdowns.recover(RESUME_REASON))) ?? report;
    const period = Math.max(100, Math.floor(this.ctx.config.leaseMs / 3));
    this.leaseTimer = setInterval(() => void this.track(this.leaseTick()), period);
    this.leaseTimer.unref?.();
    await this.step("reconciliation", () => this.injector.checks.reconcilePending());
    await this.step("recheck", () => this.evaluator.recheckOwed("restart"));
    this.retention.start();
    if (report.rearmed + report.fired + report.expired > 0)
      this.log("info", "countdowns recovered after restart", { ...report });
    return report;
  }

  /** Every third of a lease: renew this process's leases, adopt orphans, settle orphaned injections, owed looks. */
  private async leaseTick(): Promise<void> {
    if (!this.lifecycle.deciding) return;
    // The heartbeat goes out every tick, on its own: the rest of a tick can wait long for a busy pool (PostgreSQL
    // under a burst of idles), and a heartbeat held up behind it past the lease let the others take this process's
    // countdowns while it was alive and well.
    this.beating ??= this.ctx.store
      .heartbeat(this.owner, this.ctx.config.leaseMs)
      .finally(() => (this.beating = undefined));
    const beat = this.beating;
    if (this.leaseTickRunning) return void this.track(beat);
    this.leaseTickRunning = true;
    try {
      await beat;
      await this.countdowns.renewLeases();
      await this.countdowns.recover(TAKEOVER_REASON);
      void this.track(this.injector.checks.reconcilePending());
      await this.evaluator.recheckOwed("recheck");
    } finally {
      this.leaseTickRunning = false;
    }
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
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    this.timers.stop();
    this.injector.stopQueued();
    await this.starting?.catch(() => undefined);
    await this.settled();
    await this.step("lease release", () => this.countdowns.release());
    if (this.ownsOwnerId) await this.step("retirement", () => this.ctx.store.retire(this.owner));
    this.evaluator.clear();
    unregisterOwner(this.owner);
    this.lifecycle.enter("disposed");
  }

  /** Resolves when every evaluation, state change and attempt started so far has settled (tests and shutdown). */
  async settled(): Promise<void> {
    do {
      await Promise.allSettled([...this.tasks]);
      await this.lanes.idle();
      await this.injector.drain();
    } while (this.tasks.size > 0 || this.lanes.size > 0);
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
      this.failed("event handling", error);
    }
  }

  /** `tool.execute.before` / `tool.execute.after`: a tool is running, so the session is not idle. */
  toolActivity(sessionId: unknown, phase: "before" | "after"): void {
    if (!this.lifecycle.deciding || typeof sessionId !== "string") return;
    try {
      this.router.toolActivity(sessionId, phase);
    } catch (error) {
      this.failed("tool activity handling", error);
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
    if (changed && source !== "command") void this.evaluator.evaluate(sessionId, "resume");
    return changed;
  }

  /** Evaluates a session as if it had just gone idle (after a reconnect, a resume, or a lost injection). */
  reevaluate(sessionId: string): Promise<void> {
    if (!this.validSession("reevaluate", sessionId)) return Promise.resolve();
    return this.evaluator.evaluate(sessionId, "reevaluate");
  }

  private async change<T>(what: string, sessionId: string, write: (scope: SessionScope, now: number) => Promise<T>) {
    if (this.lifecycle.ending) throw new Error(`todo-continuation cannot ${what}: it is stopped`);
    try {
      return await this.lanes.run(sessionId, () => write(this.ctx.scope(sessionId), this.ctx.clock.now()));
    } catch (error) {
      this.failed(what, error);
      throw error;
    }
  }

  /** A missing or empty session id is refused, never applied to some session (peers continued the wrong one). */
  private validSession(what: string, sessionId: unknown): sessionId is string {
    if (idOf(sessionId) !== undefined && (sessionId as string).trim() !== "") return true;
    this.log("warn", `${what} ignored: no session id (or one no OpenCode session can have)`);
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
    void this.track(
      this.countdowns.recover(STORE_RECOVERED_REASON).then((report) => {
        // After the countdowns are held again: a look at a session whose countdown survived finds it armed here.
        this.evaluator.lookAgainAtUnjudged();
        return report;
      }),
    );
  }

  // ── reporting ─────────────────────────────────────────────────────────────

  /** One place for failures at a boundary: the store failing pauses the enforcer (reported once); the rest is reported. */
  private failed(operation: string, error: unknown): void {
    if (this.health.report(error)) return;
    this.events.emit("error", { operation, error });
  }

  private async step<T>(what: string, work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work();
    } catch (error) {
      this.failed(what, error);
      return undefined;
    }
  }

  private track<T>(job: Promise<T>): Promise<T | undefined> {
    const tracked = job.catch((error: unknown) => {
      this.failed("background evaluation", error);
      return undefined;
    });
    this.tasks.add(tracked);
    void tracked.finally(() => this.tasks.delete(tracked));
    return tracked;
  }

  private log(level: LogLevel, message: string, extra?: Record<string, unknown>): void {
    try {
      this.ctx.host.log(level, message, extra);
    } catch {
      // Logging must never be the thing that breaks the host.
    }
  }
}
