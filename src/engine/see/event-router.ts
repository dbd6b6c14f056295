// Events in. Each OpenCode bus event updates what this process remembers of its session (at once, synchronously) and
// hands what it changes to the part that owns it: an idle to the looks (decide/), activity to the countdowns (which it
// cancels), a sign of a turn running to the start watch, a person's message to a durable session change. The two
// streaming events (`message.part.delta`, `message.part.updated`) are answered from memory in a few Map lookups.
import { session } from "../../store/reads.js";
import { cancellationFor } from "../../core/activity.js";
import { classifyError, type ErrorKind, type ErrorReport } from "../../core/errors.js";
import { translateEvent, type DomainEvent, type RetryStatus } from "../../core/events.js";
import { isOpen, mergeLedger, parseLedger } from "../../core/todos.js";
import { afterAssistantResumed, afterRealUserMessage, afterSessionError } from "../../core/transitions.js";
import { unpark } from "../../store/changes/unpark.js";
import { changeSession } from "../../store/changes/change-session.js";
import { TAKE } from "../../store/changes/look-owed.js";
import type { SessionUpdate } from "../../store/port.js";
import type { SessionRow } from "../../store/schema.js";
import type { EngineContext } from "../context.js";
import type { Looks } from "../decide/looks.js";
import type { StartWatch } from "../deliver/start-watch.js";
import type { Countdowns } from "../wait/countdowns.js";
import type { LimitParks } from "../wait/limit-parks.js";
import type { Verifications } from "../wait/verifications.js";
import type { SessionMemories, SessionMemory } from "../memory/session-memory.js";
import type { UserMessageEvent } from "../../core/events.js";
import type { OwnMessageIds } from "../memory/own-messages.js";
import { UserMessages, type Classified } from "./user-messages.js";

type Properties = { properties?: Record<string, unknown> };

export interface RouterParts {
  memories: SessionMemories;
  countdowns: Countdowns;
  looks: Looks;
  starts: StartWatch;
  /** The enforcer's own continuations by message id. */
  ownMessages: OwnMessageIds;
  limitParks: LimitParks;
  verifications: Verifications;
}

export class EventRouter {
  readonly userMessages: UserMessages;
  eventsIgnored = 0;
  /** What a streamed chunk is answered from, held here to spare the hot path a load. */
  private readonly countdowns: Countdowns;

  constructor(
    private readonly ctx: EngineContext,
    private readonly peers: RouterParts,
    startedAt: number,
  ) {
    this.userMessages = new UserMessages(startedAt, (id) => peers.ownMessages.chose(id));
    this.countdowns = peers.countdowns;
  }

  /**
   * A streamed chunk while nothing counts down and no user message is held changes nothing, in every mode (a paused
   * store keeps no countdown, and what it observes never includes a streamed chunk): answered before the mode is
   * read, in a function small enough (no call, no try/catch) for the JIT to inline into OpenCode's call of the hook.
   */
  changesNothing(raw: unknown): boolean {
    if (this.countdowns.size !== 0) return false;
    const type = (raw as { type?: unknown } | null)?.type;
    return type === "message.part.delta" || (type === "message.part.updated" && this.userMessages.held === 0);
  }

  /** One OpenCode bus event. Synchronous; throws only on a bug (the enforcer catches at its boundary). */
  handle(raw: unknown): void {
    const type = (raw as { type?: unknown } | null)?.type;
    if (type === "message.part.delta") return this.streamDelta(raw as Properties);
    if (type === "message.part.updated") return this.partUpdated(raw as Properties);
    const event = translateEvent(raw, this.ctx.clock.now());
    if (!event) {
      this.eventsIgnored++;
      return;
    }
    this.dispatch(event);
  }

  /**
   * While the database is paused nothing can be decided (no decision without its audit row): keep only the live
   * facts in memory, so that the first decision after the pause starts from the truth, and the idles, which are
   * judged once it works again.
   */
  observe(raw: unknown): void {
    const event = translateEvent(raw, this.ctx.clock.now());
    if (!event) return;
    if (event.type === "status") this.memory(event.sessionId).sawStatus(event.status);
    else if (event.type === "todos") this.memory(event.sessionId).sawTodos(event.todos);
    else if (event.type === "compacted") this.memory(event.sessionId).sawCompaction();
    else if (event.type === "request") this.request(event.sessionId, event.requestId, event.open);
    else if (event.type === "message") this.userMessages.remember(event.messageId, event.role);
    else if (event.type === "idle") {
      // As when deciding: an idle is the end of the turn, whether or not its status event came.
      this.memory(event.sessionId).sawStatus("idle");
      this.peers.looks.owe(event.sessionId);
    }
  }

  /** After a gap in the event stream: the live state memory holds may be stale, so it is forgotten. */
  forgetLiveState(): void {
    for (const id of this.peers.memories.ids()) this.peers.memories.peek(id)!.forgetLiveState();
    this.userMessages.drop();
  }

  /** `tool.execute.before` / `tool.execute.after`: a tool is running, so the session is not idle. */
  toolActivity(sessionId: string, phase: "before" | "after"): void {
    this.peers.memories.peek(sessionId)?.sawTurnSignal();
    this.peers.starts.confirm(sessionId);
    if (this.peers.countdowns.has(sessionId)) void this.peers.countdowns.cancel(sessionId, "tool_activity", { phase });
  }

  // ── the hot path ──────────────────────────────────────────────────────────

  private streamDelta(raw: Properties): void {
    const { countdowns } = this.peers;
    const sessionId = raw.properties?.sessionID;
    if (typeof sessionId !== "string" || !countdowns.has(sessionId)) return;
    const messageId = raw.properties?.messageID;
    if (typeof messageId === "string" && this.userMessages.isUserMessage(messageId)) return;
    void countdowns.cancel(sessionId, "assistant_activity", { event: "message.part.delta" });
  }

  private partUpdated(raw: Properties): void {
    const { countdowns } = this.peers;
    const part = raw.properties?.part as Record<string, unknown> | undefined;
    if (!part || typeof part !== "object") return;
    const messageId = part.messageID;
    if (this.userMessages.held > 0 && typeof messageId === "string") {
      const verdict = this.userMessages.part(messageId, part);
      if (verdict === "pending") return;
      if (verdict) return this.classified(verdict);
    }
    if (countdowns.size === 0) return;
    const sessionId = typeof part.sessionID === "string" ? part.sessionID : raw.properties?.sessionID;
    if (typeof sessionId !== "string" || !countdowns.has(sessionId)) return;
    if (typeof messageId === "string" && this.userMessages.isUserMessage(messageId)) return;
    void countdowns.cancel(sessionId, "assistant_activity", { event: "message.part.updated", partType: part.type });
  }

  // ── the other events ──────────────────────────────────────────────────────

  private dispatch(event: DomainEvent): void {
    switch (event.type) {
      case "idle":
        return this.idle(event.sessionId);
      case "status":
        return this.statusChanged(event.sessionId, event.status, event.retry);
      case "error":
        return this.sessionError(event.sessionId, event.kind, event.error);
      case "message":
        return event.role === "assistant" ? this.assistantMessage(event) : this.userMessageSeen(event);
      case "todos":
        return this.memory(event.sessionId).sawTodos(event.todos);
      case "session_info":
        return this.sessionInfo(event.sessionId, event.parentId, event.title);
      case "session_deleted":
        return this.sessionDeleted(event.sessionId);
      case "request":
        return this.request(event.sessionId, event.requestId, event.open);
      case "compacted":
        this.memory(event.sessionId).sawCompaction();
        // A full context is what a compaction fixes (OpenCode compacts on overflow and goes on by itself).
        void this.ctx.changeSession(event.sessionId, { tokenLimitAt: null });
        return;
    }
  }

  private idle(sessionId: string): void {
    this.peers.looks.descendantIdle(sessionId);
    this.memory(sessionId).sawStatus("idle");
    this.flushUserMessages(sessionId);
    void this.peers.looks.evaluate(sessionId, "idle");
    this.ctx.events.emit("session_idle", { sessionId });
  }

  private statusChanged(sessionId: string, status: "busy" | "idle" | "retry", retry?: RetryStatus): void {
    this.memory(sessionId).sawStatus(status);
    if (status === "idle") return this.peers.looks.descendantIdle(sessionId);
    this.turnSignal(sessionId);
    if (status === "retry" && retry) void this.peers.limitParks.retryScheduled(sessionId, retry);
    else if (status === "busy") void this.peers.limitParks.turnRunning(sessionId);
    if (this.peers.countdowns.has(sessionId))
      void this.peers.countdowns.cancel(sessionId, status === "busy" ? "busy" : "recovering", { status });
  }

  private sessionError(sessionId: string, kind: ErrorKind, report: ErrorReport): void {
    const memory = this.memory(sessionId);
    memory.sawActivity();
    // Not the end of a start watch: OpenCode reports a prompt it could not even begin (an unknown agent) this way too,
    // and then never goes busy or idle.
    const now = this.ctx.clock.now();
    if (kind === "abort") memory.sawAbort(now);
    const detail = {
      kind,
      errorName: report.name ?? null,
      statusCode: report.statusCode ?? null,
      message: report.message?.slice(0, 300) ?? null,
    };
    // A limit's error is recorded with its park, in one transaction (store/changes/park-limit.ts).
    if (kind === "limit") {
      void this.peers.countdowns.cancel(sessionId, "session_error", detail);
      void this.peers.limitParks.limitMet(sessionId, report);
      return;
    }
    void this.peers.countdowns.cancel(sessionId, "session_error", detail, (row: SessionRow) =>
      afterSessionError(kind, report, now, row),
    );
  }

  private assistantMessage(event: UserMessageEvent): void {
    const { sessionId, messageId } = event;
    const memory = this.memory(sessionId);
    const isNew = this.userMessages.assistant(messageId);
    this.turnSignal(sessionId);
    // New output after a compaction is the session moving on by itself.
    if (isNew && event.summary !== true && event.agent !== "compaction") memory.sawOutputAfterCompaction();
    if (this.peers.countdowns.has(sessionId))
      void this.peers.countdowns.cancel(sessionId, "assistant_activity", { event: "message.updated", messageId });
    const kind = event.error ? classifyError(event.error) : undefined;
    if (kind === "abort") {
      // An abort during a retry leaves an errored assistant message and no session.error.
      if (memory.abortedAt == null) this.sessionError(sessionId, kind, event.error!);
      return;
    }
    if (!isNew || event.error) return;
    void this.ctx.lanes.post(sessionId, async () => {
      if (memory.abortedAt === undefined)
        memory.learnAbort((await this.ctx.store.read(session(sessionId)))?.abortedAt ?? null);
      const abortedAt = memory.abortedAt;
      if (abortedAt == null || (event.createdAt !== undefined && event.createdAt <= abortedAt)) return;
      memory.abortLifted();
      await this.ctx.store.change(
        changeSession(this.ctx.scope(sessionId), this.ctx.clock.now(), afterAssistantResumed()),
      );
    });
  }

  private userMessageSeen(event: UserMessageEvent): void {
    const evicted = this.userMessages.user(event);
    if (evicted) this.classified(evicted);
  }

  private classified({ event, kind, claims }: Classified): void {
    if (kind === "real" && claims.length > 0) this.claimingMessage(event, claims);
    else if (kind === "real") this.realUserMessage(event);
    else if (kind === "command") this.memory(event.sessionId).sawActivity();
  }

  /** User messages whose deciding part never came are settled with what came once the session moves on. */
  private flushUserMessages(sessionId: string): void {
    for (const classified of this.userMessages.flush(sessionId)) this.classified(classified);
  }

  /**
   * A message whose text names one of our injections: another process's continuation when the database recorded that
   * injection with this message id, else a person quoting one (or attaching a file that does).
   */
  private claimingMessage(event: UserMessageEvent, claims: string[]): void {
    void this.ctx.lanes.post(event.sessionId, async () => {
      const ours = await this.peers.ownMessages.confirmClaims(event.sessionId, event.messageId, claims);
      if (!ours) this.realUserMessage(event);
    });
  }

  /**
   * A person wrote in the session. Blocks that wait for "the user acted" lift and the loop protections start over;
   * if one of our continuations came since their previous message, the user took the wheel: pause (durably).
   */
  private realUserMessage(event: UserMessageEvent): void {
    const { ctx } = this;
    const { sessionId } = event;
    const memory = this.memory(sessionId);
    memory.sawPersonWrite();
    const wasStarting = this.peers.starts.drop(sessionId);
    const now = ctx.clock.now();
    // Stepping in means interrupting work we were pushing: with every todo already closed, a message is new work.
    const workWasOpen = memory.todos === undefined || memory.todos.some(isOpen);
    const todos = memory.todos ?? [];
    const change = (row: SessionRow): SessionUpdate => {
      const tookOver = ctx.config.pauseAfterUserMessage && row.continuations > 0 && workWasOpen;
      const baseline = tookOver
        ? mergeLedger(parseLedger(row.todoSnapshot) ?? { closedHigh: 0, ranks: {} }, todos)
        : null;
      return afterRealUserMessage(now, event, tookOver ? { messageId: event.messageId, baseline } : undefined);
    };
    // A continuation whose start was being watched is answered by the person: its start is no longer checked.
    const look = wasStarting ? TAKE : undefined;
    // One being armed right now is within its grace period: the message is the echo of the turn that just ended.
    const armed = this.peers.countdowns.get(sessionId);
    const reason = armed
      ? cancellationFor("user_message", armed.row.armedAt, now, ctx.config.gracePeriodMs)
      : undefined;
    if (reason) void this.peers.countdowns.cancel(sessionId, reason, { messageId: event.messageId }, change, look);
    else void ctx.changeSession(sessionId, change, look);
    // The person took over from a wait too: a park ends without waking (in the same lane, after the change above), and
    // a check of the finished list is killed: what they wrote is the next work.
    void ctx.lanes.post(sessionId, () => ctx.store.change(unpark(ctx.scope(sessionId), "user_message", now)));
    void this.peers.verifications.cancel(sessionId, "user_message");
  }

  private sessionInfo(sessionId: string, parentId: string | undefined, title: string | undefined): void {
    if (title !== undefined && this.memory(sessionId).sawTitle(title))
      void this.ctx.lanes.post(sessionId, () => this.recordTitle(sessionId, title));
    if (this.peers.memories.peek(sessionId)?.parentId === (parentId ?? null)) return;
    void this.ctx.lanes.post(sessionId, () => this.peers.looks.noteParent(sessionId, parentId ?? null));
  }

  /**
   * A title new to this process, in the session's lane: written when the database holds another (once a session after
   * a restart).
   */
  private async recordTitle(sessionId: string, title: string): Promise<void> {
    const { ctx } = this;
    if ((await ctx.store.read(session(sessionId)))?.title === title) return;
    await ctx.store.change(changeSession(ctx.scope(sessionId), ctx.clock.now(), { title }));
  }

  private sessionDeleted(sessionId: string): void {
    const { ctx } = this;
    // Deletion is the one thing besides an explicit resume that lifts a stop: the session is gone.
    const patch: SessionUpdate = { deletedAt: ctx.clock.now(), stoppedAt: null, stopSource: null };
    if (this.peers.countdowns.has(sessionId))
      void this.peers.countdowns.cancel(sessionId, "session_deleted", {}, patch, TAKE);
    else
      void ctx.lanes.post(sessionId, async () => {
        if (await ctx.store.read(session(sessionId)))
          await ctx.store.change(changeSession(ctx.scope(sessionId), ctx.clock.now(), patch, TAKE));
      });
    void this.peers.verifications.cancel(sessionId, "session_deleted");
    this.peers.memories.delete(sessionId);
    this.peers.starts.drop(sessionId);
    this.peers.looks.forget(sessionId);
    this.userMessages.drop(sessionId);
    this.peers.looks.descendantIdle(sessionId);
  }

  private request(sessionId: string, requestId: string, open: boolean): void {
    this.memory(sessionId).sawRequest(requestId, open);
  }

  /** Busy, a retry, assistant output: the session is working, and a continuation's turn has started. */
  private turnSignal(sessionId: string): void {
    this.memory(sessionId).sawTurnSignal();
    this.flushUserMessages(sessionId);
    this.peers.starts.confirm(sessionId);
  }

  private memory(sessionId: string): SessionMemory {
    return this.peers.memories.get(sessionId);
  }
}
