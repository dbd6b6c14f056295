// Which user message is a person acting now. OpenCode publishes a message, then its parts one by one. This process's
// own continuations are known by the message id it chose and never held; any other user message is held
// (held-messages.ts) until a part settles what it is — a real message, a slash command, a synthetic one — by the same
// rule as for messages read back from OpenCode (core/messages.ts). Echoes are not news: a message already known, or
// written before this process started.
import type { MessagePart } from "../../core/messages.js";
import { BoundedMap } from "../bounded-map.js";
import { HeldMessages, type Classified } from "./held-messages.js";
import type { UserMessageEvent } from "../../core/events.js";

const KNOWN_MESSAGES_CAP = 20_000;
/** A message written this long before the process started is history, not someone acting now. */
const HISTORY_MARGIN_MS = 1000;

export type { Classified };

export class UserMessages {
  private readonly live = new HeldMessages();
  /** The live messages' map itself: the hot path asks its size for every streamed part. */
  private readonly heldById: ReadonlyMap<string, unknown> = this.live.pending;
  /** Role of each message seen: an update of a known message is an echo, a part of a user message is not output. */
  private readonly known = new BoundedMap<string, "user" | "assistant">(KNOWN_MESSAGES_CAP);

  constructor(
    private readonly startedAt: number,
    /** Message ids this process chose for its own continuations. */
    private readonly isOwn: (messageId: string) => boolean,
  ) {}

  /** Messages held for their deciding part (the hot path asks before anything else). */
  get held(): number {
    return this.heldById.size;
  }

  isUserMessage(messageId: string): boolean {
    return this.known.get(messageId) === "user";
  }

  /** An assistant message: true the first time it is seen. */
  assistant(messageId: string): boolean {
    if (this.known.has(messageId)) return false;
    this.known.set(messageId, "assistant");
    return true;
  }

  /** A user message appeared: held until a part says what it is. Returns one settled to make room, if any. */
  user(event: UserMessageEvent): Classified | undefined {
    if (this.known.has(event.messageId)) return undefined; // OpenCode re-publishes a user message when it summarises the turn
    this.known.set(event.messageId, "user");
    if (this.isOwn(event.messageId)) return undefined;
    if (event.createdAt !== undefined && event.createdAt < this.startedAt - HISTORY_MARGIN_MS) return undefined;
    return this.live.seen(event);
  }

  /** A part of a message: `pending` while the held message is not settled yet, its verdict once it is. */
  part(messageId: string, part: Record<string, unknown>): Classified | "pending" | undefined {
    return this.live.part(messageId, part as Partial<MessagePart> & Record<string, unknown>);
  }

  /** The session moved on (busy, output, idle): its held messages are settled with the parts that came. */
  flush(sessionId: string): Classified[] {
    return this.live.size === 0 ? [] : this.live.flush(sessionId);
  }

  /** While the store is paused only the roles are kept (the first decision after the pause starts from the truth). */
  remember(messageId: string, role: "user" | "assistant"): void {
    this.known.set(messageId, role);
  }

  drop(sessionId?: string): void {
    this.live.drop(sessionId);
  }
}
