// One simulated session: busy while a turn runs, idle between turns. A turn ends `turnMs` after it started, with the
// todos one more completed than before it (the first turn writes them all open); a prompt on an idle session starts a
// turn, a prompt on a busy one is answered by another turn right after the running one (OpenCode's loop goes on for a
// queued message) and counted as doubled. No timer of its own: the process's scheduler calls `due` at the turn's end.
import { ascendingId, reserveStamps } from "./ids.js";
import {
  MODEL,
  PROVIDER,
  TURN_STAMPS,
  type Entry,
  type SessionFacts,
  type StoredPart,
  type Turn,
  type TurnError,
  type UserMessage,
} from "./payloads.js";
import type { Due, Scheduler } from "./scheduler.js";
import {
  failedTurnEndEvents,
  promptEvents,
  turnEndEvents,
  turnStartEvents,
  type EventDetail,
  type EventSink,
  type TurnScene,
} from "./turn-events.js";

/** What a session needs of its server. */
export interface SessionHost {
  readonly directory: string;
  readonly todos: number;
  readonly turnMs: number;
  readonly detail: EventDetail;
  readonly scheduler: Scheduler;
  readonly sink: EventSink;
  /** Until when (epoch ms) the server is frozen: nothing of it happens before then. */
  readonly frozenUntil: number;
  /** The provider's error a session's turn (1: its first) fails on; undefined: it works. */
  readonly failTurn?: (sessionId: string, turn: number) => TurnError | undefined;
}

/** What a prompt asks for (the body of `prompt_async`, checked). */
export interface PromptInput {
  messageID?: string;
  parts: StoredPart[];
  agent?: string;
  model?: { providerID: string; modelID: string };
}

/** The first prompt of every premade session: one shared array, not one per session. */
const FIRST_PARTS: readonly StoredPart[] = Object.freeze([
  Object.freeze({ type: "text", text: "Work through the list." }),
]);

export class SimSession implements Due, TurnScene {
  readonly facts: SessionFacts;
  readonly entries: Entry[] = [];
  busy = false;
  /** Todos completed so far; none exist before the first turn ended. */
  completed = 0;
  turnsDone = 0;
  /** Prompts accepted (`prompt_async` answered 204). */
  prompts = 0;
  /** Prompts that came while a turn ran. */
  doubled = 0;
  /** Prompts that came when every todo was already completed. */
  afterDone = 0;
  private running: Turn | undefined;
  private queued: UserMessage[] | undefined;

  constructor(
    private readonly host: SessionHost,
    id: string,
    title: string,
    now: number,
  ) {
    this.facts = {
      id,
      title,
      directory: host.directory,
      created: now,
      updated: now,
      steps: 0,
      prompted: false,
      summarized: false,
    };
  }

  get sink(): EventSink {
    return this.host.sink;
  }

  get detail(): EventDetail {
    return this.host.detail;
  }

  get todos(): number {
    return this.host.todos;
  }

  /** Every todo completed, and idle. */
  get finished(): boolean {
    return !this.busy && this.turnsDone > 0 && this.completed >= this.host.todos;
  }

  /**
   * A premade session's first turn, as if a person prompted it at `at` (now, or later through the scheduler): busy
   * from then, for `turnMs`. A session someone prompted before that keeps the turn it has.
   */
  beginFirstTurn(at: number, now = at): void {
    if (at > now) return this.host.scheduler.schedule(at, this);
    if (this.entries.length > 0) return;
    const message = this.store(undefined, FIRST_PARTS, undefined, undefined, now);
    this.facts.prompted = true;
    promptEvents(this, message, true, true);
    this.start(message, now);
  }

  /** `prompt_async`: stores the user message and starts a turn, or queues it behind the running one. */
  prompt(input: PromptInput, now: number): void {
    const message = this.store(input.messageID, input.parts, input.agent, input.model, now);
    const first = !this.facts.prompted;
    this.prompts++;
    this.facts.prompted = true;
    this.facts.updated = now;
    if (this.busy) {
      this.doubled++;
      (this.queued ??= []).push(message);
      promptEvents(this, message, false, first);
      return;
    }
    if (this.turnsDone > 0 && this.completed >= this.host.todos) this.afterDone++;
    promptEvents(this, message, true, first);
    this.start(message, now);
  }

  /** The scheduler's call: the running turn's end, or the first turn's start. */
  due(now: number): void {
    if (this.host.frozenUntil > now) return this.host.scheduler.schedule(this.host.frozenUntil, this);
    const turn = this.running;
    if (!turn) return this.beginFirstTurn(now);
    turn.ended = now;
    turn.failed = this.host.failTurn?.(this.facts.id, turn.call);
    // A failed turn wrote nothing: its todos are as they were.
    if (!turn.failed) turn.completedAfter = this.turnsDone === 0 ? 0 : Math.min(this.host.todos, this.completed + 1);
    this.completed = turn.completedAfter;
    this.turnsDone++;
    this.facts.steps += turn.failed ? 0 : 2;
    this.facts.updated = now;
    this.running = undefined;
    const next = this.queued?.shift();
    if (this.queued?.length === 0) this.queued = undefined;
    this.busy = next !== undefined;
    if (turn.failed) failedTurnEndEvents(this, turn, next === undefined);
    else turnEndEvents(this, turn, next === undefined);
    if (next) this.start(next, now);
  }

  private store(
    id: string | undefined,
    parts: readonly StoredPart[],
    agent: string | undefined,
    model: PromptInput["model"],
    now: number,
  ): UserMessage {
    const partStamp = reserveStamps(parts.length + 1, now);
    const message: UserMessage = {
      id: id ?? ascendingId("msg", partStamp + parts.length),
      created: now,
      parts,
      partStamp,
      agent: agent ?? "build",
      providerID: model?.providerID ?? PROVIDER,
      modelID: model?.modelID ?? MODEL,
    };
    this.entries.push(message);
    return message;
  }

  private start(message: UserMessage, now: number): void {
    const turn: Turn = {
      answers: message,
      stamp: reserveStamps(TURN_STAMPS, now),
      started: now,
      ended: 0,
      completedAfter: this.completed,
      call: this.turnsDone + 1,
    };
    this.running = turn;
    this.busy = true;
    this.facts.summarized = true;
    this.entries.push(turn);
    turnStartEvents(this, turn);
    this.host.scheduler.schedule(now + this.host.turnMs, this);
  }
}
