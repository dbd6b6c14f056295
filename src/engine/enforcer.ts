// Events in, decisions out. The enforcer mirrors in memory what the streaming events need (which sessions have an
// armed countdown), asks the pure decision core at each step, and writes a state change to SQLite only when one
// happens: a countdown armed or ended, an injection recorded, a session fact that changes a guard.
import { cancellationFor } from "../core/activity.js";
import { decide, type Decision, type DurableFacts, type LiveFacts, type Stage } from "../core/decide.js";
import { classifyError } from "../core/errors.js";
import { translateEvent, type DomainEvent } from "../core/events.js";
import type { AgentChoice } from "../core/messages.js";
import { findInjectionId, renderPrompt } from "../core/prompt.js";
import { RESUME_REASON, STORE_RECOVERED_REASON, type CancelReason, type SkipReason } from "../core/reasons.js";
import { summarize, type Todo, type TodoSummary } from "../core/todos.js";
import {
  afterAssistantResumed,
  afterInjectionFailed,
  afterInjectionSent,
  afterRealUserMessage,
  afterSessionError,
  agentColumns,
  parseSnapshot,
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
import { Injector } from "./injector.js";
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
  /** `waiting` for its deadline, or handed to the injector (`injecting`) and not yet claimed. */
  phase: "waiting" | "injecting";
  summary?: TodoSummary;
}

interface PendingUserMessage {
  event: UserMessageEvent;
}

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
  /** User messages seen but not yet classified (real, own, synthetic): their text part decides. */
  private readonly pendingUser = new Map<string, PendingUserMessage>();
  /** Role of each message seen: an update of a known message is an echo, a part of a user message is not output. */
  private readonly knownMessages = new BoundedMap<string, "user" | "assistant">(KNOWN_MESSAGES_CAP);
  /** Message ids this process chose for its own continuations. */
  private readonly ownMessages = new BoundedMap<string, true>(1000);
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
    this.memories = new SessionMemories(MEMORY_CAP, (id) => this.armed.has(id) || this.injector.isBusy(id));
    this.facts = new FactGatherer(this.host, this.config.hostTimeoutMs, () => this.clock.monotonic());
    this.injector = new Injector({
      repo: this.repo,
      host: this.host,
      clock: this.clock,
      maxConcurrent: this.config.maxConcurrentInjections,
      promptTimeoutMs: this.config.promptTimeoutMs,
      hostTimeoutMs: this.config.hostTimeoutMs,
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

  /** Resumes or expires the countdowns left armed in this scope, reconciles pending injections, starts the leases. */
  async start(): Promise<RecoveryReport> {
    if (this.started) return { rearmed: 0, fired: 0, expired: 0, foreign: 0 };
    this.started = true;
    registerOwner(this.owner);
    const report = this.scheduler.recover(RESUME_REASON);
    this.scheduler.startLeaseLoop(
      () => {
        this.health.checkFile();
        if (this.health.healthy) void this.track(this.reconcilePending());
      },
      () => !this.health.healthy,
    );
    await this.reconcilePending();
    if (this.config.retentionDays > 0) this.scheduleRetention(RETENTION_FIRST_RUN_MS);
    if (report.rearmed + report.fired + report.expired > 0) this.log("info", "countdowns recovered after restart", { ...report });
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
      const event = translateEvent(raw);
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
    const event = translateEvent(raw);
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
    this.pendingUser.clear();
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
      if (memory) memory.activity++;
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
    if (this.armed.size === 0 && this.pendingUser.size === 0) return;
    const part = raw.properties?.part as Record<string, unknown> | undefined;
    if (!part || typeof part !== "object") return;
    const messageId = part.messageID;
    if (this.pendingUser.size > 0 && typeof messageId === "string") {
      const pending = this.pendingUser.get(messageId);
      if (pending) return this.classifyUserMessage(messageId, pending, part);
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
        void this.track(this.evaluateIdle(event.sessionId, "idle"));
        return;
      case "status":
        return this.statusChanged(event.sessionId, event.status);
      case "error":
        return this.sessionError(event.sessionId, event.kind, event.name, event.message);
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
        return;
    }
  }

  private statusChanged(sessionId: string, status: "busy" | "idle" | "retry"): void {
    const memory = this.memories.get(sessionId);
    memory.status = status;
    if (status === "idle") return;
    memory.activity++;
    this.flushPendingUser(sessionId);
    if (this.armed.has(sessionId)) this.cancel(sessionId, status === "busy" ? "busy" : "recovering", { status });
  }

  private sessionError(sessionId: string, kind: ReturnType<typeof classifyError>, name?: string, message?: string): void {
    const memory = this.memories.get(sessionId);
    memory.activity++;
    const now = this.clock.now();
    const patch = afterSessionError(kind, name, now);
    if (kind === "abort") memory.abortedAt = now;
    const detail = { kind, errorName: name ?? null, message: message?.slice(0, 300) ?? null };
    if (!this.cancel(sessionId, "session_error", detail, patch)) this.repo.updateSession(this.scope(sessionId), patch, now);
  }

  private assistantMessage(event: UserMessageEvent): void {
    const { sessionId, messageId } = event;
    const memory = this.memories.get(sessionId);
    const isNew = !this.knownMessages.has(messageId);
    if (isNew) this.knownMessages.set(messageId, "assistant");
    memory.activity++;
    this.flushPendingUser(sessionId);
    if (this.armed.has(sessionId)) this.cancel(sessionId, "assistant_activity", { event: "message.updated", messageId });
    const kind = event.errorName ? classifyError(event.errorName, event.errorMessage) : undefined;
    if (kind === "abort") {
      // An abort during a retry leaves an errored assistant message and no session.error.
      if (memory.abortedAt == null) this.sessionError(sessionId, kind, event.errorName, event.errorMessage);
      return;
    }
    if (isNew && !event.errorName && this.abortedAt(sessionId, memory) != null) {
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
    this.pendingUser.set(event.messageId, { event });
  }

  private classifyUserMessage(messageId: string, pending: PendingUserMessage, part: Record<string, unknown>): void {
    if (part.type !== "text") return;
    this.pendingUser.delete(messageId);
    const text = typeof part.text === "string" ? part.text : "";
    if (findInjectionId(text)) return; // our own continuation: not the user stepping in
    if (part.synthetic === true) return;
    this.realUserMessage(pending.event);
  }

  /** User messages whose text part never came are taken as real once the session moves on. */
  private flushPendingUser(sessionId: string): void {
    if (this.pendingUser.size === 0) return;
    for (const [id, pending] of this.pendingUser) {
      if (pending.event.sessionId !== sessionId) continue;
      this.pendingUser.delete(id);
      this.realUserMessage(pending.event);
    }
  }

  private realUserMessage(event: UserMessageEvent): void {
    const { sessionId } = event;
    const memory = this.memories.get(sessionId);
    memory.activity++;
    memory.compactedRecently = false;
    memory.abortedAt = null;
    const now = this.clock.now();
    const patch = afterRealUserMessage(now, event);
    const armed = this.armed.get(sessionId);
    const reason = armed ? cancellationFor("user_message", armed.row.armedAt, now, this.config.gracePeriodMs) : undefined;
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
    const patch: SessionUpdate = { deletedAt: now, stoppedAt: null, stopSource: null };
    if (!this.cancel(sessionId, "session_deleted", {}, patch) && this.repo.getSession(sessionId)) {
      this.repo.updateSession(this.scope(sessionId), patch, now);
    }
    this.memories.delete(sessionId);
    this.timers.cancel(`reevaluate:${sessionId}`);
    for (const [id, pending] of this.pendingUser) if (pending.event.sessionId === sessionId) this.pendingUser.delete(id);
  }

  // ── the programmatic API ──────────────────────────────────────────────────

  markRecovering(sessionId: string): void {
    if (!this.validSession("markRecovering", sessionId)) return;
    this.guarded("markRecovering", () => {
      const now = this.clock.now();
      const patch = { recoveringSince: now };
      if (!this.cancel(sessionId, "recovering", { source: "api" }, patch)) this.repo.updateSession(this.scope(sessionId), patch, now);
    });
  }

  markRecoveryComplete(sessionId: string): void {
    if (!this.validSession("markRecoveryComplete", sessionId)) return;
    this.guarded("markRecoveryComplete", () => {
      this.repo.updateSession(this.scope(sessionId), { recoveringSince: null }, this.clock.now());
    });
  }

  /** Sets the durable stop (and cancels an armed countdown). Returns false when the session was already stopped. */
  stop(sessionId: string, source = "api"): boolean {
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

  /** Lifts the durable stop. Returns false when the session was not stopped. */
  resume(sessionId: string, source = "api"): boolean {
    if (!this.validSession("resume", sessionId)) return false;
    return this.guarded("resume", () => this.repo.liftStop(this.scope(sessionId), source, this.clock.now())) ?? false;
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
      this.pendingUser.clear();
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

  private async evaluateIdle(sessionId: string, trigger: "idle" | "reevaluate"): Promise<void> {
    if (this.disposed || !this.health.healthy) return;
    const memory = this.memories.get(sessionId);
    if (trigger === "idle") {
      memory.status = "idle";
      this.flushPendingUser(sessionId);
    }
    const activityBefore = memory.activity;
    const pre = this.decideNow(sessionId, "idle", undefined);
    if (pre.verdict === "skip") return this.auditSkip(sessionId, pre, { trigger });
    const facts = await this.facts.gather(sessionId);
    if (this.disposed || !this.health.healthy) return;
    if (memory.activity !== activityBefore || memory.status === "busy") {
      return this.auditSkip(sessionId, { verdict: "skip", reason: "busy", detail: { stage: "idle", during: "fetch" } }, { trigger });
    }
    // A re-evaluation follows missed events: what OpenCode says now beats what this process last saw.
    if (trigger === "reevaluate" && facts.status) memory.status = facts.status;
    if (facts.parentId !== undefined) this.sessionInfo(sessionId, facts.parentId ?? undefined);
    if (Array.isArray(facts.todos)) memory.todos = facts.todos;
    const decision = this.decideNow(sessionId, "idle", facts);
    if (decision.verdict === "skip") return this.auditSkip(sessionId, decision, { trigger, ...this.todoError(facts) });
    this.arm(sessionId, decision.summary, 0, this.config.countdownSeconds * 1000, { trigger }, facts);
  }

  private decideNow(sessionId: string, stage: Stage, facts: HostFacts | undefined): Decision {
    const memory = this.memories.get(sessionId);
    const row = this.repo.getSession(sessionId);
    const durable = this.durableFacts(row, memory, facts);
    const chosen = this.agentChoice(row, facts);
    const canWrite = chosen.writeDenied ? false : chosen.agent ? facts?.agents?.find((a) => a.name === chosen.agent)?.canWrite : undefined;
    const live: LiveFacts = {
      inFlight: stage === "before_prompt" ? this.repo.hasPendingInjection(sessionId) : this.injector.isBusy(sessionId) || this.repo.hasPendingInjection(sessionId),
      // OpenCode's answer beats memory when it says the session is working: another process (or a missed event)
      // may have set it going since this process last heard of it.
      status: facts?.status === "busy" || facts?.status === "retry" ? facts.status : (memory.status ?? facts?.status),
      busyChildren: facts?.busyChildren,
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
      abortedAt: row?.abortedAt ?? null,
      tokenLimitAt: row?.tokenLimitAt ?? null,
      continuations: row?.continuations ?? 0,
      stagnantContinuations: row?.stagnantContinuations ?? 0,
      todoSnapshot: parseSnapshot(row?.todoSnapshot),
      backoffUntil: row?.backoffUntil ?? null,
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

  private auditSkip(sessionId: string, decision: Extract<Decision, { verdict: "skip" }>, extra: Record<string, unknown>): void {
    this.repo.audit(this.clock.now(), this.scope(sessionId), { event: "skipped", reason: decision.reason, detail: { ...decision.detail, ...extra } });
  }

  // ── countdowns ────────────────────────────────────────────────────────────

  private arm(
    sessionId: string,
    summary: TodoSummary | undefined,
    attempt: number,
    delayMs: number,
    detail: Record<string, unknown>,
    facts?: HostFacts,
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
    const sessionPatch = latest ? agentColumns(latest) : undefined;
    const previous = this.armed.get(sessionId);
    // Another live process already counts down for this session (both saw the same idle): leave it to that one.
    const respect = (other: { owner: string | null; leaseUntil: number | null }) => ownerMayBeAlive(other.owner) && (other.leaseUntil ?? 0) >= now;
    const { heldBy } = this.repo.armCountdown(countdown, detail, sessionPatch, respect);
    if (heldBy) return;
    const row: CountdownRow = { ...countdown, state: "armed", endedAt: null, endReason: null };
    if (previous) this.forget(sessionId, previous);
    this.hold(sessionId, { row, phase: "waiting", summary });
    this.scheduler.track(row);
    this.toast(row, summary);
  }

  /** A countdown taken over from a dead or expired owner: mirror it so that activity can still cancel it. */
  private adopt(row: CountdownRow): void {
    const current = this.armed.get(row.sessionId);
    if (current && current.row.id !== row.id) this.forget(row.sessionId, current);
    const summary = row.todosOpen != null && row.todosTotal != null ? { open: row.todosOpen, total: row.todosTotal, completed: 0 } : undefined;
    this.hold(row.sessionId, { row, phase: "waiting", summary });
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
  private cancel(sessionId: string, reason: CancelReason, detail: Record<string, unknown>, patch?: SessionUpdate): boolean {
    return this.endArmed(sessionId, reason, "cancelled", detail, patch);
  }

  private endArmed(
    sessionId: string,
    reason: CancelReason | SkipReason,
    event: "cancelled" | "skipped",
    detail: Record<string, unknown>,
    patch?: SessionUpdate,
  ): boolean {
    const armed = this.armed.get(sessionId);
    if (!armed) return false;
    this.forget(sessionId, armed);
    return this.repo.endCountdown(armed.row, "cancelled", reason, this.clock.now(), { event, reason, detail }, patch);
  }

  private countdownDue(row: CountdownRow, info: DueInfo): void {
    const armed = this.armed.get(row.sessionId);
    if (!armed || armed.row.id !== row.id || this.disposed || !this.health.healthy) return;
    this.timers.cancel(`toast:${row.id}`);
    const decision = this.decideNow(row.sessionId, "deadline", undefined);
    if (decision.verdict === "skip") {
      this.endArmed(row.sessionId, decision.reason, "skipped", { ...decision.detail, lateMs: info.lateMs });
      return;
    }
    armed.phase = "injecting";
    void this.injector.run(row.sessionId, () => this.inject(armed, info));
  }

  // ── injection ─────────────────────────────────────────────────────────────

  private isCurrent(armed: ArmedCountdown): boolean {
    return !this.disposed && this.health.healthy && this.armed.get(armed.row.sessionId) === armed;
  }

  private async inject(armed: ArmedCountdown, info: DueInfo): Promise<void> {
    const { sessionId } = armed.row;
    if (!this.isCurrent(armed)) return;
    const facts = await this.facts.gather(sessionId);
    if (!this.isCurrent(armed)) return;
    if (Array.isArray(facts.todos)) this.memories.get(sessionId).todos = facts.todos;
    const decision = this.decideNow(sessionId, "before_prompt", facts);
    if (decision.verdict === "skip") {
      this.endArmed(sessionId, decision.reason, "skipped", { ...decision.detail, ...this.todoError(facts) });
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
    const model = choice.providerId && choice.modelId ? { providerId: choice.providerId, modelId: choice.modelId } : undefined;
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
    const plan = {
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
        owner: this.owner,
        leaseUntil: now + this.config.promptTimeoutMs + this.config.hostTimeoutMs + this.config.leaseMs,
      },
      request: {
        sessionId,
        messageId,
        text: renderPrompt(todos, injectionId, this.config.prompt),
        agent: choice.agent,
        model,
        variant: choice.variant,
      },
      sessionPatchOnSent: (session: SessionRow) => afterInjectionSent(todos, decision.verdict === "continue" ? decision.stagnantStreak : 0, session.continuations),
      detail,
    };
    const outcome = await this.injector.deliver(plan);
    if (outcome.status === "sent") {
      this.log("info", "continuation sent", { sessionId, injectionId, todosOpen: summary.open, latencyMs: Math.round(outcome.latencyMs) });
      return;
    }
    if (outcome.status === "lost") {
      this.log("debug", "countdown no longer ours at the prompt call", { sessionId, countdownId: armed.row.id });
      return;
    }
    if (outcome.status === "unknown") {
      // Possibly delivered: never resend blindly; look at the session again once the backoff has passed.
      this.log("warn", "continuation outcome unknown", { sessionId, injectionId, error: outcome.error });
      this.timers.schedule(`reevaluate:${sessionId}`, this.config.retryBaseMs, () => void this.reevaluate(sessionId));
      return;
    }
    this.injectionFailed(sessionId, plan, outcome.error, summary);
  }

  private injectionFailed(sessionId: string, plan: Parameters<Injector["recordFailure"]>[0], error: string, summary: TodoSummary): void {
    const now = this.clock.now();
    const failuresBefore = this.repo.getSession(sessionId)?.consecutiveFailures ?? 0;
    const outcome = afterInjectionFailed(failuresBefore, now, this.config);
    const detail = { injectionId: plan.injection.id, error, failures: outcome.attempt, ...(outcome.retry ? { retryInMs: outcome.delayMs } : { final: true }) };
    this.injector.recordFailure(plan, error, { event: "injection_failed", reason: outcome.retry ? "retrying" : "gave_up", detail }, outcome.patch);
    this.log(outcome.retry ? "warn" : "error", "continuation failed", { sessionId, ...detail });
    if (outcome.retry && !this.armed.has(sessionId) && !this.disposed) {
      this.arm(sessionId, summary, outcome.attempt, outcome.delayMs, { retryOf: plan.injection.id, reason: "backoff" });
    }
  }

  private async reconcilePending(): Promise<void> {
    if (!this.health.healthy) return;
    const now = this.clock.now();
    // Orphaned: its owner is certainly gone, or has been silent past the lease it took for the call.
    const rows = this.repo
      .pendingInjections(this.directory)
      .filter((row) => (row.owner === this.owner ? !this.injector.isBusy(row.sessionId) : !ownerMayBeAlive(row.owner) || (row.leaseUntil ?? 0) < now));
    for (const row of rows) {
      if (this.disposed) return;
      const result = await this.injector.reconcile(row);
      if (result === "unknown") await this.reevaluate(row.sessionId);
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

  /** The countdown toast, every second until the deadline; timed on the monotonic clock like the countdown itself. */
  private toast(row: CountdownRow, summary: TodoSummary | undefined): void {
    if (!this.config.toast) return;
    const key = `toast:${row.id}`;
    const dueMono = this.clock.monotonic() + Math.max(0, row.deadlineAt - row.armedAt);
    const tick = () => {
      const remainingMs = dueMono - this.clock.monotonic();
      if (remainingMs <= 0) return;
      const seconds = Math.max(1, Math.ceil(remainingMs / 1000));
      const open = summary ? ` (${summary.open} todos open)` : "";
      void withTimeout("toast", this.config.hostTimeoutMs, () =>
        this.host.toast({ title: "Todo continuation", message: `Resuming in ${seconds}s…${open}`, variant: "warning", durationMs: 950 }),
      ).catch(() => undefined);
      const next = remainingMs - (seconds - 1) * 1000;
      if (seconds > 1) this.timers.schedule(key, Math.min(TOAST_INTERVAL_MS, next), tick);
    };
    tick();
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

