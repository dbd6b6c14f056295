// Events in, decisions out. The enforcer mirrors in memory what the streaming events need (which sessions have an
// armed countdown), asks the pure decision core at each step, and writes a state change to SQLite only when one
// happens: a countdown armed or ended, an injection recorded, a session fact that changes a guard.
import { cancellationFor } from "../core/activity.js";
import { decide, type Decision, type DurableFacts, type LiveFacts, type Stage } from "../core/decide.js";
import { explain, STOP_NOTICES, type Explanation } from "../core/explain.js";
import { classifyError, type ErrorKind, type ErrorReport } from "../core/errors.js";
import { translateEvent, type DomainEvent } from "../core/events.js";
import type { AgentChoice } from "../core/messages.js";
import { renderPrompt, transcriptLine } from "../core/prompt.js";
import {
  EXPIRE_REASON,
  RESUME_REASON,
  STORE_RECOVERED_REASON,
  type CancelReason,
  type SkipReason,
  type StopSource,
} from "../core/reasons.js";
import { isOpen, mergeLedger, parseLedger, summarize, type Todo, type TodoSummary } from "../core/todos.js";
import {
  afterAssistantResumed,
  afterErrorsResolved,
  afterExplicitResume,
  afterRealUserMessage,
  afterSessionError,
  afterStartConfirmed,
  agentColumns,
  continuationPatch,
  liftPause,
  type SessionPatch,
} from "../core/transitions.js";
import type { Config } from "../config.js";
import type { HostPort, LogLevel } from "../host/port.js";
import type { Store } from "../store/open.js";
import { Repository, type NewCountdown, type SessionScope, type SessionUpdate } from "../store/repository.js";
import { prune } from "../store/retention.js";
import type { CountdownRow, SessionRow } from "../store/schema.js";
import { systemClock, type Clock } from "./clock.js";
import { FactGatherer, type HostFacts } from "./facts.js";
import { errorMessage, withTimeout } from "./host-calls.js";
import { newId, newMessageId } from "./ids.js";
import { Injector, type RetryPlan } from "./injector.js";
import { LiveUserMessages, type Classified } from "./live-user-messages.js";
import { newOwnerId, ownerMayBeAlive, registerOwner, unregisterOwner } from "./owner.js";
import { CountdownScheduler, type DueInfo, type RecoveryReport } from "./scheduler.js";
import { BoundedMap, SessionMemories, type SessionMemory, type UserMessageEvent } from "./session-memory.js";
import { StoreHealth } from "./store-health.js";
import { TimerQueue } from "./timer-queue.js";

export interface EnforcerOptions {
  config: Config;
  store: Store;
  host: HostPort;
  /** The scope of this process: the OpenCode instance directory its sessions belong to. */
  directory: string;
  clock?: Clock;
  owner?: string;
}

interface ArmedCountdown {
  row: CountdownRow;
  summary?: TodoSummary;
}

/** A continuation sent whose turn has not been seen starting yet. */
interface StartWatch {
  injectionId: string;
  messageId: string;
  sentMono: number;
}

/** What triggered an evaluation: an idle event, a look the enforcer owed (after a restart, a resume…), a lost idle. */
type Trigger = "idle" | "reevaluate" | "recheck" | "restart" | "children_done" | "resume";

export interface EnforcerStats {
  eventsIgnored: number;
  armed: number;
  sessionsInMemory: number;
  timers: number;
  /** Why the enforcer is paused, while its database does not work. */
  storeProblem?: string;
}

const MEMORY_CAP = 5000;
const KNOWN_MESSAGES_CAP = 20_000;
const TOAST_INTERVAL_MS = 1000;
/** Retention runs a minute after start (not during OpenCode's own start-up), then every six hours. */
const RETENTION_FIRST_RUN_MS = 60_000;
const RETENTION_PERIOD_MS = 6 * 3_600_000;
/** A parent held back by busy sub-sessions is looked at again at least this often (if an event is missed). */
const CHILDREN_RECHECK_MS = 60_000;
/** How long the toast that says why continuation stopped stays up. */
const STOP_TOAST_MS = 8000;

export class Enforcer {
  readonly owner: string;
  private readonly repo: Repository;
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly config: Config;
  private readonly host: HostPort;
  private readonly directory: string;
  private readonly timers: TimerQueue;
  private readonly scheduler: CountdownScheduler;
  private readonly injector: Injector;
  private readonly facts: FactGatherer;
  private readonly health: StoreHealth;
  /** The hot-path index: sessions with an armed countdown in this process. */
  private readonly armed = new Map<string, ArmedCountdown>();
  /** The same countdowns by id (the scheduler asks whether one is already held). */
  private readonly armedIds = new Set<string>();
  private readonly memories: SessionMemories;
  /** User messages seen but not yet classified (real, own, command, synthetic). */
  private readonly userMessages = new LiveUserMessages();
  /** Role of each message seen: an update of a known message is an echo, a part of a user message is not output. */
  private readonly knownMessages = new BoundedMap<string, "user" | "assistant">(KNOWN_MESSAGES_CAP);
  /** Message ids this process chose for its own continuations. */
  private readonly ownMessages = new BoundedMap<string, true>(1000);
  /** Sessions whose last continuation has not been seen starting. */
  private readonly starting = new BoundedMap<string, StartWatch>(1000);
  /** Continuations already counted as never started (each counts once). */
  private readonly notStartedSeen = new BoundedMap<string, true>(1000);
  /** Parents held back by busy sub-sessions, and the sub-sessions they wait for. */
  private readonly waitingOn = new BoundedMap<string, Set<string>>(1000);
  /** Sessions being evaluated right now (a recheck leaves them to the evaluation in progress). */
  private readonly evaluating = new Set<string>();
  private readonly tasks = new Set<Promise<unknown>>();
  private readonly startedAt: number;
  private eventsIgnored = 0;
  private started = false;
  private disposed = false;

  constructor(options: EnforcerOptions) {
    this.config = options.config;
    this.host = options.host;
    this.directory = options.directory;
    this.clock = options.clock ?? systemClock;
    this.owner = options.owner ?? newOwnerId();
    this.store = options.store;
    this.repo = new Repository(options.store);
    this.startedAt = this.clock.now();
    this.timers = new TimerQueue(this.clock, (key, error) => this.failed(`timer ${key}`, error));
    this.memories = new SessionMemories(
      MEMORY_CAP,
      (id) => this.armed.has(id) || this.injector.isBusy(id) || this.starting.has(id),
    );
    this.facts = new FactGatherer(this.host, this.config.hostTimeoutMs, () => this.clock.monotonic());
    this.injector = new Injector({
      repo: this.repo,
      host: this.host,
      clock: this.clock,
      maxConcurrent: this.config.maxConcurrentInjections,
      promptTimeoutMs: this.config.promptTimeoutMs,
      hostTimeoutMs: this.config.hostTimeoutMs,
      startTimeoutMs: this.config.startTimeoutMs,
      policy: this.config,
      log: (level, message, extra) => this.log(level, message, extra),
      onJobError: (error) => this.failed("continuation", error),
    });
    this.health = new StoreHealth({
      path: options.store.path,
      log: (level, message, extra) => this.log(level, message, extra),
      probe: () => this.repo.probeWrite(this.store.raw, this.config.busyTimeoutMs),
      onFailed: () => this.pauseForStore(),
      onRecovered: () => this.resumeAfterStore(),
      schedule: (delayMs, run) => this.timers.schedule("store-probe", delayMs, run),
      probeIntervalMs: this.config.storeProbeMs,
    });
    this.scheduler = new CountdownScheduler({
      repo: this.repo,
      timers: this.timers,
      clock: this.clock,
      owner: this.owner,
      directory: this.directory,
      leaseMs: this.config.leaseMs,
      resumeWindowMs: this.config.resumeWindowSeconds * 1000,
      onDue: (row, info) => this.countdownDue(row, info),
      onAdopted: (row) => this.adopt(row),
      isHeld: (id) => this.isHeld(id),
      onError: (what, error) => this.failed(what, error),
    });
  }

  // ── lifecycle ─────────────────────────────────────────────────────────────

  /**
   * Resumes or expires the countdowns left armed in this scope, reconciles pending injections, looks again at the
   * sessions it owed a look (an idle not decided before a crash), starts the leases.
   */
  async start(): Promise<RecoveryReport> {
    if (this.started) return { rearmed: 0, fired: 0, expired: 0, foreign: 0 };
    this.started = true;
    registerOwner(this.owner);
    const report = this.scheduler.recover(RESUME_REASON);
    this.scheduler.startLeaseLoop(
      () => {
        this.health.checkFile();
        if (!this.health.healthy) return;
        void this.track(this.reconcilePending());
        this.recheckOwed("recheck");
      },
      () => !this.health.healthy,
    );
    await this.reconcilePending();
    this.recheckOwed("restart");
    if (this.config.retentionDays > 0) this.scheduleRetention(RETENTION_FIRST_RUN_MS);
    if (report.rearmed + report.fired + report.expired > 0)
      this.log("info", "countdowns recovered after restart", { ...report });
    return report;
  }

  /** Stops every timer and queue and hands armed countdowns back to the database for a successor. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.scheduler.stop(true);
    this.timers.stop();
    this.injector.dispose();
    this.armed.clear();
    this.armedIds.clear();
    this.starting.clear();
    this.waitingOn.clear();
    unregisterOwner(this.owner);
  }

  /** Resolves when every evaluation and continuation started so far has settled (for tests and shutdown). */
  async settled(): Promise<void> {
    while (this.tasks.size > 0) await Promise.allSettled([...this.tasks]);
    await this.injector.drain();
    if (this.tasks.size > 0) await this.settled();
  }

  stats(): EnforcerStats {
    return {
      eventsIgnored: this.eventsIgnored,
      armed: this.armed.size,
      sessionsInMemory: this.memories.size,
      timers: this.timers.size,
      storeProblem: this.health.state?.kind,
    };
  }

  // ── events ────────────────────────────────────────────────────────────────

  /**
   * One OpenCode bus event. Synchronous and never throws: slow work (reading OpenCode, waiting) continues in the
   * background. The two streaming events return after at most a few Map lookups unless a countdown must end.
   */
  handleEvent(raw: unknown): void {
    if (this.disposed) return;
    try {
      if (!this.health.healthy) return this.observe(raw);
      const type = (raw as { type?: unknown } | null)?.type;
      if (type === "message.part.delta") return this.streamDelta(raw as { properties?: Record<string, unknown> });
      if (type === "message.part.updated") return this.partUpdated(raw as { properties?: Record<string, unknown> });
      const event = translateEvent(raw, this.clock.now());
      if (!event) {
        this.eventsIgnored++;
        return;
      }
      this.dispatch(event);
    } catch (error) {
      this.failed("event handling", error);
    }
  }

  /**
   * While the database is paused nothing can be decided (no decision without its audit row): keep only the live
   * facts in memory, so that the first decision after the pause starts from the truth.
   */
  private observe(raw: unknown): void {
    const event = translateEvent(raw, this.clock.now());
    if (!event) return;
    if (event.type === "status") this.memories.get(event.sessionId).status = event.status;
    else if (event.type === "todos") this.memories.get(event.sessionId).todos = event.todos;
    else if (event.type === "compacted") this.memories.get(event.sessionId).compactedRecently = true;
    else if (event.type === "request") {
      const requests = this.memories.get(event.sessionId).pendingRequests;
      if (event.open) requests.add(event.requestId);
      else requests.delete(event.requestId);
    } else if (event.type === "message") this.knownMessages.set(event.messageId, event.role);
  }

  /** The database failed: drop in-memory countdowns (their rows stay ours and are adopted again on recovery). */
  private pauseForStore(): void {
    for (const [sessionId, armed] of [...this.armed]) this.forget(sessionId, armed);
    this.scheduler.untrackAll();
    this.userMessages.drop();
  }

  private resumeAfterStore(): void {
    this.guarded("recovery after a database pause", () => {
      this.scheduler.recover(STORE_RECOVERED_REASON);
    });
  }

  /** One place for failures at a boundary: the database failing is reported once by StoreHealth; the rest is logged. */
  private failed(what: string, error: unknown): void {
    if (this.health.report(error)) return;
    this.log("error", `${what} failed`, { error: errorMessage(error) });
  }

  /** `tool.execute.before` / `tool.execute.after`: a tool is running, so the session is not idle. */
  toolActivity(sessionId: unknown, phase: "before" | "after"): void {
    if (this.disposed || typeof sessionId !== "string") return;
    try {
      const memory = this.memories.peek(sessionId);
      if (memory) {
        memory.activity++;
        memory.turnSignals++;
      }
      this.turnStarted(sessionId);
      if (this.armed.has(sessionId)) this.cancel(sessionId, "tool_activity", { phase });
    } catch (error) {
      this.failed("tool activity handling", error);
    }
  }

  private streamDelta(raw: { properties?: Record<string, unknown> }): void {
    if (this.armed.size === 0) return;
    const sessionId = raw.properties?.sessionID;
    if (typeof sessionId !== "string" || !this.armed.has(sessionId)) return;
    const messageId = raw.properties?.messageID;
    if (typeof messageId === "string" && this.knownMessages.get(messageId) === "user") return;
    this.cancel(sessionId, "assistant_activity", { event: "message.part.delta" });
  }

  private partUpdated(raw: { properties?: Record<string, unknown> }): void {
    // The common case while a model streams: nothing to cancel, no user message to classify.
    if (this.armed.size === 0 && this.userMessages.size === 0) return;
    const part = raw.properties?.part as Record<string, unknown> | undefined;
    if (!part || typeof part !== "object") return;
    const messageId = part.messageID;
    if (this.userMessages.size > 0 && typeof messageId === "string") {
      const verdict = this.userMessages.part(messageId, part);
      if (verdict === "pending") return;
      if (verdict) return this.userMessageClassified(verdict);
    }
    if (this.armed.size === 0) return;
    const sessionId = typeof part.sessionID === "string" ? part.sessionID : raw.properties?.sessionID;
    if (typeof sessionId !== "string" || !this.armed.has(sessionId)) return;
    if (typeof messageId === "string" && this.knownMessages.get(messageId) === "user") return;
    this.cancel(sessionId, "assistant_activity", { event: "message.part.updated", partType: part.type });
  }

  private dispatch(event: DomainEvent): void {
    switch (event.type) {
      case "idle":
        this.descendantIdle(event.sessionId);
        void this.track(this.evaluateIdle(event.sessionId, "idle"));
        return;
      case "status":
        return this.statusChanged(event.sessionId, event.status);
      case "error":
        return this.sessionError(event.sessionId, event.kind, event.error);
      case "message":
        return event.role === "assistant" ? this.assistantMessage(event) : this.userMessageSeen(event);
      case "todos":
        this.memories.get(event.sessionId).todos = event.todos;
        return;
      case "session_info":
        return this.sessionInfo(event.sessionId, event.parentId);
      case "session_deleted":
        return this.sessionDeleted(event.sessionId);
      case "request": {
        const requests = this.memories.get(event.sessionId).pendingRequests;
        if (event.open) requests.add(event.requestId);
        else requests.delete(event.requestId);
        return;
      }
      case "compacted":
        this.memories.get(event.sessionId).compactedRecently = true;
        // A full context is what a compaction fixes (OpenCode compacts on overflow and goes on by itself).
        this.repo.updateSession(this.scope(event.sessionId), { tokenLimitAt: null }, this.clock.now());
        return;
    }
  }

  private statusChanged(sessionId: string, status: "busy" | "idle" | "retry"): void {
    const memory = this.memories.get(sessionId);
    memory.status = status;
    if (status === "idle") return this.descendantIdle(sessionId);
    memory.activity++;
    memory.turnSignals++;
    this.flushUserMessages(sessionId);
    this.turnStarted(sessionId);
    if (this.armed.has(sessionId)) this.cancel(sessionId, status === "busy" ? "busy" : "recovering", { status });
  }

  private sessionError(sessionId: string, kind: ErrorKind, report: ErrorReport): void {
    const memory = this.memories.get(sessionId);
    memory.activity++;
    // Not the end of a start watch: OpenCode reports a prompt it could not even begin (an unknown agent) this way too,
    // and then never goes busy or idle.
    const now = this.clock.now();
    const patch = (row: SessionRow): SessionUpdate => afterSessionError(kind, report, now, row);
    if (kind === "abort") memory.abortedAt = now;
    const detail = {
      kind,
      errorName: report.name ?? null,
      statusCode: report.statusCode ?? null,
      message: report.message?.slice(0, 300) ?? null,
    };
    if (!this.cancel(sessionId, "session_error", detail, patch))
      this.repo.updateSession(this.scope(sessionId), patch, now);
  }

  private assistantMessage(event: UserMessageEvent): void {
    const { sessionId, messageId } = event;
    const memory = this.memories.get(sessionId);
    const isNew = !this.knownMessages.has(messageId);
    if (isNew) this.knownMessages.set(messageId, "assistant");
    memory.activity++;
    memory.turnSignals++;
    this.flushUserMessages(sessionId);
    this.turnStarted(sessionId);
    // New output after a compaction is the session moving on by itself.
    if (isNew && event.summary !== true && event.agent !== "compaction") memory.compactedRecently = false;
    if (this.armed.has(sessionId))
      this.cancel(sessionId, "assistant_activity", { event: "message.updated", messageId });
    const kind = event.error ? classifyError(event.error) : undefined;
    if (kind === "abort") {
      // An abort during a retry leaves an errored assistant message and no session.error.
      if (memory.abortedAt == null) this.sessionError(sessionId, kind, event.error!);
      return;
    }
    if (isNew && !event.error && this.abortedAt(sessionId, memory) != null) {
      const abortedAt = memory.abortedAt!;
      if (event.createdAt === undefined || event.createdAt > abortedAt) {
        memory.abortedAt = null;
        this.repo.updateSession(this.scope(sessionId), afterAssistantResumed(), this.clock.now());
      }
    }
  }

  private userMessageSeen(event: UserMessageEvent): void {
    if (this.knownMessages.has(event.messageId)) return; // OpenCode re-publishes a user message when it summarises the turn
    this.knownMessages.set(event.messageId, "user");
    if (this.ownMessages.has(event.messageId)) return;
    // A message written before this process started is an echo of history, not someone acting now.
    if (event.createdAt !== undefined && event.createdAt < this.startedAt - 1000) return;
    const evicted = this.userMessages.seen(event);
    if (evicted) this.userMessageClassified(evicted);
  }

  private userMessageClassified({ event, kind }: Classified): void {
    if (kind === "real") this.realUserMessage(event);
    else if (kind === "command") this.memories.get(event.sessionId).activity++;
  }

  /** User messages whose deciding part never came are settled with what came once the session moves on. */
  private flushUserMessages(sessionId: string): void {
    if (this.userMessages.size === 0) return;
    for (const classified of this.userMessages.flush(sessionId)) this.userMessageClassified(classified);
  }

  /**
   * A person wrote in the session. Blocks that wait for "the user acted" lift and the loop protections start over;
   * if one of our continuations came since their previous message, the user took the wheel: pause (durably).
   */
  private realUserMessage(event: UserMessageEvent): void {
    const { sessionId } = event;
    const memory = this.memories.get(sessionId);
    memory.activity++;
    memory.compactedRecently = false;
    memory.abortedAt = null;
    const wasStarting = this.starting.delete(sessionId);
    if (wasStarting) this.timers.cancel(`start:${sessionId}`);
    const now = this.clock.now();
    // Stepping in means interrupting work we were pushing: with every todo already closed, a message is new work.
    const workWasOpen = memory.todos === undefined || memory.todos.some(isOpen);
    const patch = (row: SessionRow): SessionUpdate => {
      const tookOver = this.config.pauseAfterUserMessage && row.continuations > 0 && workWasOpen;
      const baseline = tookOver
        ? mergeLedger(parseLedger(row.todoSnapshot) ?? { closedHigh: 0, ranks: {} }, memory.todos ?? [])
        : null;
      return {
        ...afterRealUserMessage(now, event, tookOver ? { messageId: event.messageId, baseline } : undefined),
        ...(wasStarting ? { recheckAt: null } : {}),
      };
    };
    const armed = this.armed.get(sessionId);
    const reason = armed
      ? cancellationFor("user_message", armed.row.armedAt, now, this.config.gracePeriodMs)
      : undefined;
    if (!reason || !this.cancel(sessionId, reason, { messageId: event.messageId }, patch)) {
      this.repo.updateSession(this.scope(sessionId), patch, now);
    }
  }

  private sessionInfo(sessionId: string, parentId: string | undefined): void {
    const memory = this.memories.get(sessionId);
    const next = parentId ?? null;
    if (memory.parentId === next) return;
    memory.parentId = next;
    if (next !== null) {
      const row = this.repo.getSession(sessionId);
      if (row?.parentId !== next) this.repo.updateSession(this.scope(sessionId), { parentId: next }, this.clock.now());
    }
  }

  private sessionDeleted(sessionId: string): void {
    const now = this.clock.now();
    // Deletion is the one thing besides an explicit resume that lifts a stop: the session is gone.
    const patch: SessionUpdate = { deletedAt: now, stoppedAt: null, stopSource: null, recheckAt: null };
    if (!this.cancel(sessionId, "session_deleted", {}, patch) && this.repo.getSession(sessionId)) {
      this.repo.updateSession(this.scope(sessionId), patch, now);
    }
    this.memories.delete(sessionId);
    this.starting.delete(sessionId);
    this.waitingOn.delete(sessionId);
    this.timers.cancel(`start:${sessionId}`);
    this.userMessages.drop(sessionId);
    this.descendantIdle(sessionId);
  }

  // ── waiting for sub-sessions and for a continuation to start ────────────────

  /** A sub-session went idle (or away): a parent that waited for its last busy descendant is looked at again. */
  private descendantIdle(sessionId: string): void {
    if (this.waitingOn.size === 0) return;
    for (const [parent, busy] of [...this.waitingOn]) {
      if (!busy.delete(sessionId) || busy.size > 0) continue;
      this.waitingOn.delete(parent);
      void this.track(this.evaluateIdle(parent, "children_done"));
    }
  }

  /**
   * After `sent`: the turn must start within `startTimeoutMs`, or the continuation counts as failed (`not_started`).
   * `signalsAtCall`: the session's turn signals when the call began; one since then already confirms it.
   */
  private watchStart(sessionId: string, injectionId: string, messageId: string, signalsAtCall: number): void {
    this.starting.set(sessionId, { injectionId, messageId, sentMono: this.clock.monotonic() });
    if (this.memories.get(sessionId).turnSignals !== signalsAtCall) return this.turnStarted(sessionId);
    this.timers.schedule(
      `start:${sessionId}`,
      this.config.startTimeoutMs,
      () => void this.track(this.checkStart(sessionId, injectionId)),
    );
  }

  /** Any sign of the turn running confirms the start (a state change: the failures in a row are over). */
  private turnStarted(sessionId: string): void {
    if (this.starting.size === 0) return;
    const watch = this.starting.get(sessionId);
    if (!watch) return;
    this.starting.delete(sessionId);
    this.timers.cancel(`start:${sessionId}`);
    this.repo.updateSession(this.scope(sessionId), { ...afterStartConfirmed(), recheckAt: null }, this.clock.now());
  }

  private async checkStart(sessionId: string, injectionId: string): Promise<void> {
    const watch = this.starting.get(sessionId);
    if (!watch || watch.injectionId !== injectionId || this.disposed || !this.health.healthy) return;
    // Events can be missed (a reconnecting service): ask OpenCode before calling it a failure.
    const started = await this.facts.turnStarted(sessionId, watch.messageId);
    if (this.starting.get(sessionId) !== watch) return;
    this.starting.delete(sessionId);
    if (started !== false) {
      this.repo.updateSession(this.scope(sessionId), { ...afterStartConfirmed(), recheckAt: null }, this.clock.now());
      return;
    }
    this.notStarted(sessionId, injectionId, this.clock.monotonic() - watch.sentMono);
  }

  private notStarted(sessionId: string, injectionId: string, waitedMs: number): void {
    if (this.notStartedSeen.has(injectionId)) return;
    this.notStartedSeen.set(injectionId, true);
    const next = this.injector.recordNotStarted({ id: injectionId, sessionId, directory: this.directory }, waitedMs);
    if (!next) return;
    this.log("warn", "continuation accepted but its turn never started", {
      sessionId,
      injectionId,
      waitedMs: Math.round(waitedMs),
    });
    this.retryAfter(sessionId, next, undefined, { retryOf: injectionId, reason: "not_started" });
  }

  // ── the programmatic API ──────────────────────────────────────────────────

  markRecovering(sessionId: string): void {
    if (!this.validSession("markRecovering", sessionId)) return;
    this.guarded("markRecovering", () => {
      const now = this.clock.now();
      const patch = { recoveringSince: now };
      if (!this.cancel(sessionId, "recovering", { source: "api" }, patch))
        this.repo.updateSession(this.scope(sessionId), patch, now);
    });
  }

  markRecoveryComplete(sessionId: string): void {
    if (!this.validSession("markRecoveryComplete", sessionId)) return;
    this.guarded("markRecoveryComplete", () => {
      this.repo.updateSession(this.scope(sessionId), { recoveringSince: null }, this.clock.now());
    });
  }

  /** Sets the durable stop (and cancels an armed countdown). Returns false when the session was already stopped. */
  stop(sessionId: string, source: StopSource = "api"): boolean {
    if (!this.validSession("stop", sessionId)) return false;
    return (
      this.guarded("stop", () => {
        const { changed, cancelled } = this.repo.setStop(this.scope(sessionId), source, this.clock.now());
        const armed = this.armed.get(sessionId);
        if (cancelled && armed?.row.id === cancelled.id) this.forget(sessionId, armed);
        return changed;
      }) ?? false
    );
  }

  /**
   * An explicit resume: lifts the durable stop and a takeover pause, starts the loop protections over, and looks at
   * the session again at once. Returns false when there was nothing to lift or reset.
   */
  resume(sessionId: string, source: StopSource = "api"): boolean {
    if (!this.validSession("resume", sessionId)) return false;
    const changed =
      this.guarded("resume", () =>
        this.repo.resume(this.scope(sessionId), source, this.clock.now(), afterExplicitResume()),
      ) ?? false;
    // A command's own turn makes the session busy first; its idle is evaluated then. The API and the CLI look now.
    if (changed && source !== "command") void this.track(this.evaluateIdle(sessionId, "resume"));
    return changed;
  }

  /**
   * After a gap in the event stream (the standalone service reconnecting), what memory holds about live state may be
   * stale: forget it, so decisions rely on OpenCode's answers until events arrive again.
   */
  eventsMayHaveBeenMissed(): void {
    this.guarded("eventsMayHaveBeenMissed", () => {
      for (const id of this.memories.ids()) {
        const memory = this.memories.peek(id)!;
        memory.status = undefined;
        memory.pendingRequests.clear();
      }
      this.userMessages.drop();
    });
  }

  /** Evaluates a session as if it had just gone idle (after a reconnect, a resume, or a lost injection). */
  reevaluate(sessionId: string): Promise<void> {
    if (!this.validSession("reevaluate", sessionId)) return Promise.resolve();
    return this.track(this.evaluateIdle(sessionId, "reevaluate"));
  }

  /** A missing or empty session id is refused, never applied to some session (peers continued the wrong one). */
  private validSession(what: string, sessionId: unknown): sessionId is string {
    if (typeof sessionId === "string" && sessionId.trim() !== "") return true;
    this.log("warn", `${what} ignored: no session id`);
    return false;
  }

  // ── decisions ─────────────────────────────────────────────────────────────

  /**
   * The sessions of this scope the enforcer owes a look (`sessions.recheck_at`: an idle not decided before a crash,
   * a continuation not seen starting, a resume from the CLI), within the resume window; older ones expire.
   */
  private recheckOwed(trigger: "restart" | "recheck"): void {
    this.guarded("recheck", () => {
      const now = this.clock.now();
      const windowMs = this.config.resumeWindowSeconds * 1000;
      for (const { sessionId, recheckAt } of this.repo.sessionsToRecheck(this.directory, now)) {
        if (
          this.evaluating.has(sessionId) ||
          this.starting.has(sessionId) ||
          this.armed.has(sessionId) ||
          this.injector.isBusy(sessionId)
        )
          continue;
        const lateMs = now - (recheckAt ?? now);
        if (lateMs >= windowMs) {
          this.repo.updateSession(this.scope(sessionId), { recheckAt: null }, now, [
            { event: "expired", reason: EXPIRE_REASON, detail: { recheck: true, lateMs, resumeWindowMs: windowMs } },
          ]);
          continue;
        }
        void this.track(this.evaluateIdle(sessionId, trigger));
      }
    });
  }

  private async evaluateIdle(sessionId: string, trigger: Trigger): Promise<void> {
    if (this.disposed || !this.health.healthy) return;
    const memory = this.memories.get(sessionId);
    if (trigger === "idle") {
      memory.status = "idle";
      this.flushUserMessages(sessionId);
    }
    const owedAlready = trigger === "recheck" || trigger === "restart" || trigger === "resume";
    const pre = this.decideNow(sessionId, "idle", undefined);
    if (pre.verdict === "skip") {
      // Our own continuation is still being delivered (its answer looked up): this idle is looked at once it settles.
      if (pre.reason === "in_flight" && this.injector.isBusy(sessionId)) memory.idleWhileInjecting = true;
      return this.recordSkip(sessionId, pre, { trigger }, owedAlready ? { recheckAt: null } : undefined);
    }
    this.evaluating.add(sessionId);
    try {
      // Durable from here: if this process dies while it reads OpenCode, the next one looks again.
      if (!owedAlready)
        this.repo.updateSession(this.scope(sessionId), { recheckAt: this.clock.now() }, this.clock.now());
      await this.evaluateWithFacts(sessionId, memory, trigger);
    } finally {
      this.evaluating.delete(sessionId);
    }
  }

  private async evaluateWithFacts(sessionId: string, memory: SessionMemory, trigger: Trigger): Promise<void> {
    const activityBefore = memory.activity;
    const facts = await this.facts.gather(sessionId, this.inspectOptions(this.repo.getSession(sessionId)));
    if (this.disposed || !this.health.healthy) return;
    if (memory.activity !== activityBefore || memory.status === "busy") {
      return this.recordSkip(
        sessionId,
        { verdict: "skip", reason: "busy", detail: { stage: "idle", during: "fetch" } },
        { trigger },
        { recheckAt: null },
      );
    }
    // A re-evaluation follows missed events: what OpenCode says now beats what this process last saw.
    if (trigger !== "idle" && facts.status) memory.status = facts.status;
    if (facts.parentId !== undefined) this.sessionInfo(sessionId, facts.parentId ?? undefined);
    if (Array.isArray(facts.todos)) memory.todos = facts.todos;
    if (this.unstartedContinuation(sessionId, facts)) return;
    const decision = this.decideNow(sessionId, "idle", facts);
    if (decision.verdict === "skip") {
      if (decision.reason === "children_running" && facts.busyDescendants?.length) {
        this.waitingOn.set(sessionId, new Set(facts.busyDescendants));
        return this.recordSkip(sessionId, decision, { trigger }, { recheckAt: this.clock.now() + CHILDREN_RECHECK_MS });
      }
      return this.recordSkip(sessionId, decision, { trigger, ...this.todoError(facts) }, { recheckAt: null });
    }
    const delayMs = Math.max(this.config.countdownSeconds * 1000, (decision.notBefore ?? 0) - this.clock.now());
    const row = this.repo.getSession(sessionId);
    const failures = row?.consecutiveFailures ?? 0;
    // The budget travels with the decision, so a reader of the audit (the TUI panel) can say "2 of 20".
    const detail: Record<string, unknown> = {
      trigger,
      continuations: row?.continuations ?? 0,
      maxContinuations: this.config.maxContinuations,
    };
    if (decision.waitingFor) detail.waitingFor = decision.waitingFor;
    if (decision.pauseLifted) detail.pauseLifted = decision.pauseLifted;
    this.arm(
      sessionId,
      decision.summary,
      decision.waitingFor === "backoff" ? failures : 0,
      delayMs,
      detail,
      facts,
      this.armPatch(decision, facts),
    );
  }

  /**
   * The last continuation sent is the session's last message, nothing answered it, and the session is idle well
   * after it went out: OpenCode accepted it and never started the turn (a look after a restart or a missed event).
   */
  private unstartedContinuation(sessionId: string, facts: HostFacts): boolean {
    if (facts.messages?.replyToLastInjection !== "none" || facts.status !== "idle" || this.armed.has(sessionId))
      return false;
    const last = this.lastSent(sessionId, facts);
    if (!last || this.notStartedSeen.has(last.id) || this.clock.now() - last.createdAt < this.config.startTimeoutMs)
      return false;
    this.starting.delete(sessionId);
    this.timers.cancel(`start:${sessionId}`);
    this.notStarted(sessionId, last.id, this.clock.now() - last.createdAt);
    return true;
  }

  private lastSent(sessionId: string, facts: HostFacts): { id: string; createdAt: number } | undefined {
    const messageId = facts.messages?.ownMessageIds.at(-1);
    const injectionId = facts.messages?.ownInjectionIds.at(-1);
    const row = injectionId ? this.repo.getInjection(injectionId) : undefined;
    if (
      !row ||
      row.sessionId !== sessionId ||
      row.status !== "sent" ||
      (messageId && row.messageId && row.messageId !== messageId)
    )
      return undefined;
    return { id: row.id, createdAt: row.createdAt };
  }

  /** Session columns that go with arming: the agent seen, a pause that lifted, errors that are over, the owed look. */
  private armPatch(decision: Extract<Decision, { verdict: "continue" }>, facts: HostFacts): SessionPatch {
    const latest = facts.messages?.latestReal;
    return {
      ...(latest ? agentColumns(latest) : {}),
      ...(decision.pauseLifted ? liftPause() : {}),
      ...(decision.errorsResolved ? afterErrorsResolved() : {}),
      recheckAt: null,
    };
  }

  private inspectOptions(row: SessionRow | undefined) {
    return { detectTextQuestions: this.config.detectTextQuestions, answerOf: row?.pauseMessageId ?? null };
  }

  private decideNow(sessionId: string, stage: Stage, facts: HostFacts | undefined): Decision {
    const memory = this.memories.get(sessionId);
    const row = this.repo.getSession(sessionId);
    const durable = this.durableFacts(row, memory, facts);
    const chosen = this.agentChoice(row, facts);
    const canWrite = chosen.writeDenied
      ? false
      : chosen.agent
        ? facts?.agents?.find((a) => a.name === chosen.agent)?.canWrite
        : undefined;
    const live: LiveFacts = {
      inFlight:
        stage === "before_prompt"
          ? this.repo.hasPendingInjection(sessionId)
          : this.injector.isBusy(sessionId) || this.repo.hasPendingInjection(sessionId),
      // OpenCode's answer beats memory when it says the session is working: another process (or a missed event)
      // may have set it going since this process last heard of it.
      status: facts?.status === "busy" || facts?.status === "retry" ? facts.status : (memory.status ?? facts?.status),
      busyChildren: facts?.busyDescendants?.length,
      busyDescendantIds: facts?.busyDescendants,
      pendingRequests: memory.pendingRequests.size,
      messages: facts?.messages,
      compactedRecently: memory.compactedRecently,
      agent: chosen.agent,
      agentCanWrite: canWrite,
    };
    const todos = facts ? facts.todos : stage === "deadline" ? memory.todos : undefined;
    return decide({ stage, now: this.clock.now(), config: this.config, durable, live, todos });
  }

  private durableFacts(row: SessionRow | undefined, memory: SessionMemory, facts: HostFacts | undefined): DurableFacts {
    return {
      parentId: row?.parentId ?? memory.parentId ?? facts?.parentId ?? null,
      stoppedAt: row?.stoppedAt ?? null,
      recovering: row?.recoveringSince != null,
      lastErrorAt: row?.lastErrorAt ?? null,
      lastErrorKind: row?.lastErrorKind ?? null,
      lastErrorName: row?.lastErrorName ?? null,
      errorStreak: row?.errorStreak ?? 0,
      lastErrorRetryAfterMs: row?.lastErrorRetryAfterMs ?? null,
      abortedAt: row?.abortedAt ?? null,
      tokenLimitAt: row?.tokenLimitAt ?? null,
      continuations: row?.continuations ?? 0,
      stagnantContinuations: row?.stagnantContinuations ?? 0,
      unproductiveReplies: row?.unproductiveReplies ?? 0,
      ledger: parseLedger(row?.todoSnapshot),
      backoffUntil: row?.backoffUntil ?? null,
      pausedAt: row?.pausedAt ?? null,
      pauseMessageId: row?.pauseMessageId ?? null,
      pauseLedger: parseLedger(row?.pauseBaseline),
    };
  }

  /** The agent and model of the latest real message: from the messages when read, else as last recorded. */
  private agentChoice(row: SessionRow | undefined, facts: HostFacts | undefined): AgentChoice {
    const latest = facts?.messages?.latestReal;
    if (latest && (latest.agent || latest.modelId)) return latest;
    return {
      agent: row?.agent ?? undefined,
      providerId: row?.modelProvider ?? undefined,
      modelId: row?.modelId ?? undefined,
      variant: row?.variant ?? undefined,
    };
  }

  private todoError(facts: HostFacts): Record<string, unknown> {
    return facts.todoError ? { error: facts.todoError } : {};
  }

  /** A skip is a decision: its audit row, and the owed look settled (or moved) with it in one transaction. */
  private recordSkip(
    sessionId: string,
    decision: Extract<Decision, { verdict: "skip" }>,
    extra: Record<string, unknown>,
    patch?: SessionUpdate,
  ): void {
    const entry = { event: "skipped" as const, reason: decision.reason, detail: { ...decision.detail, ...extra } };
    const now = this.clock.now();
    if (patch) this.repo.updateSession(this.scope(sessionId), patch, now, [entry]);
    else this.repo.audit(now, this.scope(sessionId), entry);
    if (STOP_NOTICES.has(decision.reason))
      this.noticeStop(sessionId, decision.reason, explain("skipped", decision.reason, entry.detail));
  }

  /**
   * Continuation ended until someone acts: tell the user once, with the reason and what to do (a toast from the
   * server side, so it shows without the TUI plugin too). Durable, so a restart does not tell it again.
   */
  private noticeStop(sessionId: string, reason: string, explanation: Explanation | undefined): void {
    if (!explanation || this.repo.getSession(sessionId)?.notifiedStop === reason) return;
    this.repo.updateSession(this.scope(sessionId), { notifiedStop: reason }, this.clock.now());
    const message = `${explanation.text[0]!.toUpperCase()}${explanation.text.slice(1)}.${explanation.hint ? ` ${explanation.hint[0]!.toUpperCase()}${explanation.hint.slice(1)}.` : ""}`;
    this.log("info", `continuation ended: ${explanation.text}`, { sessionId, reason });
    if (!this.config.toast) return;
    void withTimeout("toast", this.config.hostTimeoutMs, () =>
      this.host.toast({ title: "Todo continuation", message, variant: "warning", durationMs: STOP_TOAST_MS }),
    ).catch(() => undefined);
  }

  // ── countdowns ────────────────────────────────────────────────────────────

  private arm(
    sessionId: string,
    summary: TodoSummary | undefined,
    attempt: number,
    delayMs: number,
    detail: Record<string, unknown>,
    facts?: HostFacts,
    sessionPatch?: SessionUpdate,
  ): void {
    const now = this.clock.now();
    const countdown: NewCountdown = {
      id: newId("cd"),
      sessionId,
      directory: this.directory,
      armedAt: now,
      deadlineAt: now + delayMs,
      owner: this.owner,
      leaseUntil: now + this.config.leaseMs,
      attempt,
      todosOpen: summary?.open ?? null,
      todosTotal: summary?.total ?? null,
    };
    const latest = facts?.messages?.latestReal;
    const patch = sessionPatch ?? (latest ? agentColumns(latest) : undefined);
    const previous = this.armed.get(sessionId);
    // Another live process already counts down for this session (both saw the same idle): leave it to that one.
    const respect = (other: { owner: string | null; leaseUntil: number | null }) =>
      ownerMayBeAlive(other.owner) && (other.leaseUntil ?? 0) >= now;
    const { heldBy } = this.repo.armCountdown(countdown, detail, patch, respect);
    if (heldBy) return;
    const row: CountdownRow = { ...countdown, state: "armed", endedAt: null, endReason: null };
    if (previous) this.forget(sessionId, previous);
    this.hold(sessionId, { row, summary });
    this.scheduler.track(row);
    this.toast(row, summary);
  }

  /** A countdown taken over from a dead or expired owner: mirror it so that activity can still cancel it. */
  private adopt(row: CountdownRow): void {
    const current = this.armed.get(row.sessionId);
    if (current && current.row.id !== row.id) this.forget(row.sessionId, current);
    const summary =
      row.todosOpen != null && row.todosTotal != null
        ? { open: row.todosOpen, total: row.todosTotal, completed: 0 }
        : undefined;
    this.hold(row.sessionId, { row, summary });
  }

  private isHeld(countdownId: string): boolean {
    return this.armedIds.has(countdownId);
  }

  private hold(sessionId: string, armed: ArmedCountdown): void {
    this.armed.set(sessionId, armed);
    this.armedIds.add(armed.row.id);
  }

  /** Drops the countdown from memory and its timers; the database row is the caller's business. */
  private forget(sessionId: string, armed: ArmedCountdown): void {
    if (this.armed.get(sessionId) === armed) this.armed.delete(sessionId);
    this.armedIds.delete(armed.row.id);
    this.scheduler.untrack(armed.row.id);
    this.timers.cancel(`toast:${armed.row.id}`);
  }

  /** Ends the session's armed countdown with `reason`; false when none was armed (or another ended it first). */
  private cancel(
    sessionId: string,
    reason: CancelReason,
    detail: Record<string, unknown>,
    patch?: SessionUpdate | ((row: SessionRow) => SessionUpdate),
  ): boolean {
    return this.endArmed(sessionId, { event: "cancelled", reason, detail }, patch);
  }

  /** Ends the armed countdown: `cancelled` by activity, or `skipped` when a guard says no at its deadline. */
  private endArmed(
    sessionId: string,
    entry:
      | { event: "cancelled"; reason: CancelReason; detail: Record<string, unknown> }
      | { event: "skipped"; reason: SkipReason; detail: Record<string, unknown> },
    patch?: SessionUpdate | ((row: SessionRow) => SessionUpdate),
  ): boolean {
    const armed = this.armed.get(sessionId);
    if (!armed) return false;
    this.forget(sessionId, armed);
    return this.repo.endCountdown(armed.row, "cancelled", entry.reason, this.clock.now(), entry, patch);
  }

  /** Whether a countdown this process holds was ended elsewhere (the TUI's key, the CLI): then it is let go. */
  private endedElsewhere(armed: ArmedCountdown): boolean {
    if (this.repo.getCountdown(armed.row.id)?.state === "armed") return false;
    this.forget(armed.row.sessionId, armed);
    return true;
  }

  private countdownDue(row: CountdownRow, info: DueInfo): void {
    const armed = this.armed.get(row.sessionId);
    if (!armed || armed.row.id !== row.id || this.disposed || !this.health.healthy) return;
    this.timers.cancel(`toast:${row.id}`);
    if (this.endedElsewhere(armed)) return;
    const decision = this.decideNow(row.sessionId, "deadline", undefined);
    if (decision.verdict === "skip") {
      this.endArmed(row.sessionId, {
        event: "skipped",
        reason: decision.reason,
        detail: { ...decision.detail, lateMs: info.lateMs },
      });
      return;
    }
    void this.injector.run(row.sessionId, () => this.inject(armed, info));
  }

  // ── injection ─────────────────────────────────────────────────────────────

  private isCurrent(armed: ArmedCountdown): boolean {
    return !this.disposed && this.health.healthy && this.armed.get(armed.row.sessionId) === armed;
  }

  private async inject(armed: ArmedCountdown, info: DueInfo): Promise<void> {
    try {
      await this.deliverContinuation(armed, info);
    } finally {
      const memory = this.memories.peek(armed.row.sessionId);
      if (memory?.idleWhileInjecting && !this.disposed) {
        memory.idleWhileInjecting = false;
        // After this job has left the session's queue, or the look would see it in flight again.
        const { sessionId } = armed.row;
        this.timers.schedule(
          `reevaluate:${sessionId}`,
          0,
          () => void this.track(this.evaluateIdle(sessionId, "reevaluate")),
        );
      }
    }
  }

  private async deliverContinuation(armed: ArmedCountdown, info: DueInfo): Promise<void> {
    const { sessionId } = armed.row;
    if (!this.isCurrent(armed)) return;
    const session = this.repo.getSession(sessionId);
    const facts = await this.facts.gather(sessionId, this.inspectOptions(session));
    if (!this.isCurrent(armed)) return;
    if (Array.isArray(facts.todos)) this.memories.get(sessionId).todos = facts.todos;
    // An earlier continuation that failed or was lost in a timeout may have arrived after all: never send on top of it.
    const arrived = this.injector.confirmEarlier(sessionId, facts.messages);
    if (arrived) {
      this.endArmed(sessionId, {
        event: "skipped",
        reason: "in_flight",
        detail: { stage: "before_prompt", delivered: arrived.id },
      });
      void this.track(this.evaluateIdle(sessionId, "reevaluate"));
      return;
    }
    const decision = this.decideNow(sessionId, "before_prompt", facts);
    if (decision.verdict === "skip") {
      this.endArmed(sessionId, {
        event: "skipped",
        reason: decision.reason,
        detail: { ...decision.detail, ...this.todoError(facts) },
      });
      return;
    }
    const todos = facts.todos as Todo[];
    const row = this.repo.getSession(sessionId);
    const choice = this.agentChoice(row, facts);
    const summary = summarize(todos);
    const injectionId = newId("inj");
    const now = this.clock.now();
    const messageId = newMessageId(now);
    this.ownMessages.set(messageId, true);
    const model =
      choice.providerId && choice.modelId ? { providerId: choice.providerId, modelId: choice.modelId } : undefined;
    const detail = {
      countdownId: armed.row.id,
      agent: choice.agent ?? null,
      model: model ? `${model.providerId}/${model.modelId}` : null,
      todosOpen: summary.open,
      todosTotal: summary.total,
      attempt: armed.row.attempt,
      lateMs: info.lateMs,
      resumed: info.resumed,
    };
    this.forget(sessionId, armed);
    const onSent = continuationPatch(
      parseLedger(row?.todoSnapshot),
      todos,
      decision.stagnantStreak,
      decision.unproductiveStreak,
    );
    const signalsAtCall = this.memories.get(sessionId).turnSignals;
    const outcome = await this.injector.deliver({
      injection: {
        id: injectionId,
        sessionId,
        directory: this.directory,
        countdownId: armed.row.id,
        messageId,
        createdAt: now,
        agent: choice.agent ?? null,
        model: detail.model,
        variant: choice.variant ?? null,
        todosTotal: summary.total,
        todosOpen: summary.open,
        attempt: armed.row.attempt,
        onSent: JSON.stringify(onSent),
        owner: this.owner,
        leaseUntil: now + this.config.promptTimeoutMs + this.config.hostTimeoutMs + this.config.leaseMs,
      },
      request: {
        sessionId,
        messageId,
        text: renderPrompt(todos, injectionId, this.config.prompt),
        display: this.config.quietTranscript ? transcriptLine(todos) : undefined,
        agent: choice.agent,
        model,
        variant: choice.variant,
      },
      detail,
    });
    switch (outcome.status) {
      case "sent":
        this.log("info", "continuation sent", {
          sessionId,
          injectionId,
          todosOpen: summary.open,
          latencyMs: Math.round(outcome.latencyMs),
        });
        if (!this.disposed) this.watchStart(sessionId, injectionId, messageId, signalsAtCall);
        return;
      case "lost":
        this.log("debug", "countdown no longer ours at the prompt call", { sessionId, countdownId: armed.row.id });
        return;
      case "unknown":
      case "failed":
        // Possibly delivered or not: the retry looks for it before sending anything (Injector.confirmEarlier).
        this.log(
          outcome.next.retry ? "warn" : "error",
          `continuation ${outcome.status === "unknown" ? "outcome unknown" : "failed"}`,
          {
            sessionId,
            injectionId,
            error: outcome.error,
            attempt: outcome.next.attempt,
          },
        );
        this.retryAfter(sessionId, outcome.next, summary, { retryOf: injectionId, reason: "backoff" });
    }
  }

  /** Arms the retry a failure plan asks for, unless something newer already counts down for the session. */
  private retryAfter(
    sessionId: string,
    next: RetryPlan,
    summary: TodoSummary | undefined,
    detail: Record<string, unknown>,
  ): void {
    if (!next.retry && !this.disposed)
      this.noticeStop(
        sessionId,
        "gave_up",
        explain("injection_failed", "gave_up", { attempt: next.attempt, final: true }),
      );
    if (!next.retry || this.armed.has(sessionId) || this.disposed) return;
    this.arm(sessionId, summary, next.attempt, next.delayMs, detail);
  }

  private async reconcilePending(): Promise<void> {
    if (!this.health.healthy) return;
    const now = this.clock.now();
    // Orphaned: its owner is certainly gone, or has been silent past the lease it took for the call.
    const rows = this.repo
      .pendingInjections(this.directory)
      .filter((row) =>
        row.owner === this.owner
          ? !this.injector.isBusy(row.sessionId)
          : !ownerMayBeAlive(row.owner) || (row.leaseUntil ?? 0) < now,
      );
    for (const row of rows) {
      if (this.disposed) return;
      const result = await this.injector.reconcile(row);
      if (result.status === "unknown")
        this.retryAfter(row.sessionId, result.next, undefined, { retryOf: row.id, reason: "not_found" });
    }
  }

  // ── retention ─────────────────────────────────────────────────────────────

  private scheduleRetention(delayMs: number): void {
    this.timers.schedule("retention", delayMs, () => {
      const cutoff = this.clock.now() - this.config.retentionDays * 86_400_000;
      void this.track(
        prune(this.store.raw, { cutoff }).then((report) => {
          if (report.auditEvents + report.countdowns + report.injections + report.sessions > 0) {
            this.log("info", `retention: deleted history older than ${this.config.retentionDays} days`, { ...report });
          }
        }),
      ).finally(() => {
        if (!this.disposed) this.scheduleRetention(RETENTION_PERIOD_MS);
      });
    });
  }

  // ── toasts, logging, helpers ──────────────────────────────────────────────

  /**
   * The countdown toast, every second during the last `countdownSeconds` before the deadline (a long wait for a
   * backoff or a provider's retry-after stays quiet until then); timed on the monotonic clock like the countdown.
   */
  private toast(row: CountdownRow, summary: TodoSummary | undefined): void {
    if (!this.config.toast) return;
    const key = `toast:${row.id}`;
    const dueMono = this.clock.monotonic() + Math.max(0, row.deadlineAt - row.armedAt);
    const windowMs = Math.max(1000, this.config.countdownSeconds * 1000);
    const tick = () => {
      const remainingMs = dueMono - this.clock.monotonic();
      if (remainingMs <= 0) return;
      // Cancelled with the TUI's key (another process): the countdown stops showing within a second.
      const armed = this.armed.get(row.sessionId);
      if (
        !armed ||
        armed.row.id !== row.id ||
        this.guarded("countdown check", () => this.endedElsewhere(armed)) !== false
      )
        return;
      const seconds = Math.max(1, Math.ceil(remainingMs / 1000));
      const open = summary ? ` (${summary.open} todos open)` : "";
      void withTimeout("toast", this.config.hostTimeoutMs, () =>
        this.host.toast({
          title: "Todo continuation",
          message: `Resuming in ${seconds}s…${open}`,
          variant: "warning",
          durationMs: 950,
        }),
      ).catch(() => undefined);
      const next = remainingMs - (seconds - 1) * 1000;
      if (seconds > 1) this.timers.schedule(key, Math.min(TOAST_INTERVAL_MS, next), tick);
    };
    const quietMs = dueMono - this.clock.monotonic() - windowMs;
    if (quietMs > 0) this.timers.schedule(key, quietMs, tick);
    else tick();
  }

  private scope(sessionId: string): SessionScope {
    return { sessionId, directory: this.directory };
  }

  private abortedAt(sessionId: string, memory: SessionMemory): number | null {
    if (memory.abortedAt === undefined) memory.abortedAt = this.repo.getSession(sessionId)?.abortedAt ?? null;
    return memory.abortedAt;
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    const tracked = promise.catch((error: unknown) => {
      this.failed("background evaluation", error);
      return undefined as T;
    });
    this.tasks.add(tracked);
    void tracked.finally(() => this.tasks.delete(tracked));
    return tracked;
  }

  private guarded<T>(what: string, work: () => T): T | undefined {
    try {
      return work();
    } catch (error) {
      this.failed(what, error);
      return undefined;
    }
  }

  private log(level: LogLevel, message: string, extra?: Record<string, unknown>): void {
    try {
      this.host.log(level, message, extra);
    } catch {
      // Logging must never be the thing that breaks the host.
    }
  }
}
