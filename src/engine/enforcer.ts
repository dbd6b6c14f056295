// The engine's composition root and its public face. It builds the infrastructure and the parts (parts.ts: each on
// parts built before it, never on one built after, later ones reached through engine events), runs their lifecycle
// in a fixed order, and offers the programmatic API. One idle, event to prompt call (README "Layout"):
//   see/event-router → decide/looks → decide/judge (core/decide) → wait/countdowns.arm → wait/timer-queue
//   → countdown_due → deliver/injector → wait/countdowns.claim → the host's prompt → deliver/outcomes
import { RESUME_REASON, STORE_RECOVERED_REASON, type StopSource } from "../core/reasons.js";
import type { Config } from "../config/resolve.js";
import type { HostPort } from "../host/port.js";
import { resume as resumeChange } from "../store/changes/resume.js";
import { stop as stopChange } from "../store/changes/stop.js";
import { idOf } from "../core/fields.js";
import { newOwnerId, registerOwner, unregisterOwner } from "../store/owner.js";
import type { EngineStore, SessionScope } from "../store/port.js";
import { systemClock, type Clock } from "./clock.js";
import { createContext, type EngineContext } from "./context.js";
import { EngineEmitter, logEngineEvents, type EngineEventName, type EngineEvents } from "./engine-events.js";
import { Lifecycle, type Mode } from "./lifecycle.js";
import { buildParts, routeEngineEvents, type EngineParts } from "./parts.js";
import { SessionLanes } from "./session-lanes.js";
import { StoreHealth, type StoreState } from "./store-health.js";
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

export class Enforcer {
  readonly owner: string;
  private readonly ownsOwnerId: boolean;
  private readonly ctx: EngineContext;
  private readonly lifecycle = new Lifecycle();
  private readonly events = new EngineEmitter();
  private readonly timers: TimerQueue;
  private readonly lanes: SessionLanes;
  private readonly health: StoreHealth;
  private readonly parts: EngineParts;
  /** What a streamed chunk is answered from (handleEvent), held here to spare the hot path two loads. */
  private readonly countdowns: EngineParts["countdowns"];
  private readonly userMessages: EngineParts["router"]["userMessages"];
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

    const parts = (this.parts = buildParts(ctx));
    this.countdowns = parts.countdowns;
    this.userMessages = parts.router.userMessages;
    logEngineEvents(events, ctx.log, store.location);
    events.on("failure", ({ operation, error }) => {
      if (!this.health.report(error)) events.emit("error", { operation, error });
    });
    routeEngineEvents(ctx, parts);
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
    await this.step("heartbeat", () => this.parts.leases.heartbeat());
    report = (await this.step("recovery", () => this.parts.countdowns.recover(RESUME_REASON))) ?? report;
    this.parts.leases.start();
    await this.step("reconciliation", () => this.parts.reconciler.reconcilePending());
    await this.step("recheck", () => this.parts.looks.recheckOwed("restart"));
    const billed = await this.step("billing", () => this.parts.billing.recover());
    this.parts.retention.start();
    if (billed) this.ctx.log("info", "turns billed after restart", { billed });
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
    this.parts.leases.stop();
    this.timers.stop();
    this.parts.queue.stopQueued();
    this.parts.starts.clear();
    await this.starting?.catch(() => undefined);
    await this.settled();
    await this.step("lease release", () => this.parts.countdowns.release());
    if (this.ownsOwnerId) await this.step("retirement", () => this.ctx.store.retire(this.owner));
    this.parts.looks.clear();
    unregisterOwner(this.owner);
    this.lifecycle.enter("disposed");
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
    const mode = this.lifecycle.mode;
    // A streamed chunk with nothing counting down and no user message held changes nothing: answered here, in a
    // function small enough (no call, no try/catch) for the JIT to inline into OpenCode's call of the hook.
    if (mode === "running" && this.countdowns.size === 0) {
      const type = (raw as { type?: unknown } | null)?.type;
      if (type === "message.part.delta") return;
      if (type === "message.part.updated" && this.userMessages.held === 0) return;
    }
    this.route(raw, mode);
  }

  private route(raw: unknown, mode: Mode): void {
    try {
      if (mode === "running") this.parts.router.handle(raw);
      else if (mode === "paused_store") this.parts.router.observe(raw);
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
    if (!this.validSession("markRecovering", sessionId) || !this.lifecycle.deciding) return;
    const since = this.ctx.clock.now();
    void this.parts.countdowns.cancel(sessionId, "recovering", { source: "api" }, { recoveringSince: since });
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
    if (cancelled) this.parts.countdowns.letGo(sessionId, cancelled.id);
    return changed;
  }

  /**
   * An explicit resume: lifts the durable stop and a takeover pause, starts the loop protections over, and looks at
   * the session again at once. Resolves with false when there was nothing to lift or reset; rejects when it could
   * not be written.
   */
  async resume(sessionId: string, source: StopSource = "api"): Promise<boolean> {
    this.requireSession("resume", sessionId);
    const { changed } = await this.change("resume", sessionId, (scope, now) =>
      this.ctx.store.change(resumeChange(scope, source, now)),
    );
    // A command's own turn makes the session busy first; its idle is evaluated then. The API looks now (the CLI and
    // the TUI, other processes, leave the look owed: store/changes/resume.ts).
    if (changed && source !== "command") void this.parts.looks.evaluate(sessionId, "resume");
    return changed;
  }

  /** Evaluates a session as if it had just gone idle (after a reconnect, a resume, or a lost injection). */
  reevaluate(sessionId: string): Promise<void> {
    if (!this.validSession("reevaluate", sessionId)) return Promise.resolve();
    return this.parts.looks.evaluate(sessionId, "reevaluate");
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
    this.parts.countdowns.dropAll();
    this.parts.router.userMessages.drop();
  }

  private resumeAfterStore(): void {
    if (this.lifecycle.mode !== "paused_store") return;
    this.lifecycle.enter("running");
    void this.ctx.track(
      this.parts.countdowns.recover(STORE_RECOVERED_REASON).then((report) => {
        // After the countdowns are held again: a look at a session whose countdown survived finds it armed here.
        this.parts.looks.lookAgainAtUnjudged();
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
