// What this process remembers about sessions between events, so that streaming events are answered from memory.
// Nothing here must survive a restart: the durable state is in SQLite, the rest is re-read from OpenCode.
import type { DomainEvent, SessionStatus } from "../../core/events.js";
import type { Todo } from "../../core/todos.js";

export interface SessionMemory {
  status?: SessionStatus;
  /** Mirror of `sessions.aborted_at` (undefined until read once), so assistant output can lift an abort cheaply. */
  abortedAt?: number | null;
  parentId?: string | null;
  /** Latest todos from `todo.updated`: the countdown's end is judged on them without asking OpenCode. */
  todos?: Todo[];
  /** Todo reads in a row that failed (each retried later through `recheck_at`, the durable part). */
  todoReadFailures?: number;
  pendingRequests: Set<string>;
  compactedRecently: boolean;
  /** Bumped by every activity: an evaluation that awaited OpenCode can tell that the session moved on meanwhile. */
  activity: number;
  /**
   * Bumped by every sign of a turn running (busy, assistant output, a tool): a continuation's start is confirmed by
   * any that came after its prompt call began (OpenCode may go busy before the call returns).
   */
  turnSignals: number;
  /** An idle came while this process's continuation of the session was still in flight: look again once it settles. */
  idleWhileInjecting?: boolean;
}

export type UserMessageEvent = Extract<DomainEvent, { type: "message" }>;

export class SessionMemories {
  private readonly map = new Map<string, SessionMemory>();
  /** Eviction runs again only when the map reaches this size (pinned sessions may hold it above the cap). */
  private evictAt: number;

  constructor(
    private readonly cap: number,
    /** Sessions that must not be forgotten (a countdown is armed or a continuation is queued). */
    private readonly pinned: (sessionId: string) => boolean,
  ) {
    this.evictAt = cap;
  }

  get size(): number {
    return this.map.size;
  }

  ids(): string[] {
    return [...this.map.keys()];
  }

  peek(sessionId: string): SessionMemory | undefined {
    return this.map.get(sessionId);
  }

  get(sessionId: string): SessionMemory {
    let memory = this.map.get(sessionId);
    if (!memory) {
      if (this.map.size >= this.evictAt) this.evict();
      memory = { pendingRequests: new Set(), compactedRecently: false, activity: 0, turnSignals: 0 };
      this.map.set(sessionId, memory);
    }
    return memory;
  }

  delete(sessionId: string): void {
    this.map.delete(sessionId);
  }

  /**
   * Drops the oldest unpinned sessions until the map is a tenth below the cap (one pass). When pinned sessions (armed
   * countdowns, queued continuations) hold it above that, the next pass waits until the map has grown by another
   * tenth of its size: passes get rarer as it grows, so eviction stays amortized O(1) per new session.
   */
  private evict(): void {
    const step = Math.max(1, Math.floor(this.cap / 10));
    let toDrop = this.map.size - (this.cap - step);
    for (const id of this.map.keys()) {
      if (toDrop <= 0) break;
      if (this.pinned(id)) continue;
      this.map.delete(id);
      toDrop--;
    }
    this.evictAt = Math.max(this.cap, this.map.size + Math.max(step, Math.floor(this.map.size / 10)));
  }
}
