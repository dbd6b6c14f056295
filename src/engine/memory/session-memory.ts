// What this process remembers about sessions between events, so that streaming events are answered from memory.
// Nothing here must survive a restart: the durable state is in the database, the rest is re-read from OpenCode.
import type { SessionStatus } from "../../core/events.js";
import type { Todo } from "../../core/todos.js";

/**
 * What this process remembers of one session. Its fields change only through the verbs below, each named after what
 * was seen, so that every way a field can change is listed here and nowhere else.
 */
export class SessionMemory {
  #status: SessionStatus | undefined;
  #abortedAt: number | null | undefined;
  #parentId: string | null | undefined;
  #title: string | undefined;
  #todos: Todo[] | undefined;
  #todoReadFailures = 0;
  readonly #openRequests = new Set<string>();
  #compactedRecently = false;
  #activity = 0;
  #turnSignals = 0;
  #idleWhileInjecting = false;

  get status(): SessionStatus | undefined {
    return this.#status;
  }

  /** Mirror of `sessions.aborted_at` (undefined until read once), so assistant output can lift an abort cheaply. */
  get abortedAt(): number | null | undefined {
    return this.#abortedAt;
  }

  get parentId(): string | null | undefined {
    return this.#parentId;
  }

  /** Latest todos, from `todo.updated` or OpenCode's answer: the countdown's end is judged on them beside the read. */
  get todos(): readonly Todo[] | undefined {
    return this.#todos;
  }

  /** Todo reads in a row that failed (each retried later through the look owed, the durable part). */
  get todoReadFailures(): number {
    return this.#todoReadFailures;
  }

  /** Questions and permission requests asked and not answered yet. */
  get openRequests(): number {
    return this.#openRequests.size;
  }

  /** Which they are, oldest first. */
  get openRequestIds(): string[] {
    return [...this.#openRequests];
  }

  get compactedRecently(): boolean {
    return this.#compactedRecently;
  }

  /** Bumped by every activity: an evaluation that awaited OpenCode can tell that the session moved on meanwhile. */
  get activity(): number {
    return this.#activity;
  }

  /**
   * Bumped by every sign of a turn running (busy, assistant output, a tool): a continuation's start is confirmed by
   * any that came after its prompt call began (OpenCode may go busy before the call returns).
   */
  get turnSignals(): number {
    return this.#turnSignals;
  }

  /** Its status, as an event or OpenCode said. */
  sawStatus(status: SessionStatus): void {
    this.#status = status;
  }

  /** Todos as `todo.updated` reported them. */
  sawTodos(todos: Todo[]): void {
    this.#todos = todos;
  }

  /** Todos as OpenCode answered a read: the run of failed reads is over. */
  readTodos(todos: Todo[]): void {
    this.#todos = todos;
    this.#todoReadFailures = 0;
  }

  /** How many todo reads in a row have failed now (0: the retries gave up, the next idle starts over). */
  failedTodoReads(inARow: number): void {
    this.#todoReadFailures = inARow;
  }

  sawCompaction(): void {
    this.#compactedRecently = true;
  }

  /** New output after a compaction: the session moves on by itself. */
  sawOutputAfterCompaction(): void {
    this.#compactedRecently = false;
  }

  /** Something happened in the session (an error, a command). */
  sawActivity(): void {
    this.#activity++;
  }

  /** A sign of a turn running: busy, a retry, assistant output, a tool. */
  sawTurnSignal(): void {
    this.#activity++;
    this.#turnSignals++;
  }

  /** A person wrote: activity, and what a compaction or an abort held back is over. */
  sawPersonWrite(): void {
    this.#activity++;
    this.#compactedRecently = false;
    this.#abortedAt = null;
  }

  sawAbort(at: number): void {
    this.#abortedAt = at;
  }

  /** The database's `aborted_at`, learned when memory did not know it yet. */
  learnAbort(at: number | null): void {
    if (this.#abortedAt === undefined) this.#abortedAt = at;
  }

  /** Output after the abort: the session works again. */
  abortLifted(): void {
    this.#abortedAt = null;
  }

  /** Its title, as OpenCode's events say it; true when that is news (the database holds it for the page). */
  sawTitle(title: string): boolean {
    if (this.#title === title) return false;
    this.#title = title;
    return true;
  }

  /** Its parent, as an event or OpenCode said; true when that is news. */
  sawParent(parentId: string | null): boolean {
    if (this.#parentId === parentId) return false;
    this.#parentId = parentId;
    return true;
  }

  sawRequest(requestId: string, open: boolean): void {
    if (open) this.#openRequests.add(requestId);
    else this.#openRequests.delete(requestId);
  }

  /** After a gap in the event stream, the live state may be stale: forgotten until events or OpenCode say again. */
  forgetLiveState(): void {
    this.#status = undefined;
    this.#openRequests.clear();
  }

  /** An idle came while this process's continuation of the session was in flight: look again once it settles. */
  idleWhileInjecting(): void {
    this.#idleWhileInjecting = true;
  }

  /** Whether an idle came while a continuation was in flight; asking clears it (the look it owes is made once). */
  takeIdleWhileInjecting(): boolean {
    const owed = this.#idleWhileInjecting;
    this.#idleWhileInjecting = false;
    return owed;
  }
}

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
      memory = new SessionMemory();
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
