// User messages as they stream in: OpenCode publishes the message, then its parts one by one. A message is held here
// until a part settles what it is (core/messages.ts `classifyUserMessage`, the same rule as for messages read back
// from OpenCode), or until the session moves on and what arrived so far has to do.
import {
  claimedInjectionIds,
  classifyUserMessage,
  isDecisivePart,
  type MessagePart,
  type UserMessageKind,
} from "../../core/messages.js";
import type { UserMessageEvent } from "../../core/events.js";

interface Pending {
  event: UserMessageEvent;
  parts: MessagePart[];
}

export interface Classified {
  event: UserMessageEvent;
  kind: UserMessageKind;
  /** Injection ids its text claims: a `real` message with claims is checked against the database (own-messages.ts). */
  claims: string[];
}

/** Beyond this many unsettled messages the oldest is settled with what it has (a flood of partless messages). */
const CAP = 1000;

export class HeldMessages {
  /** Held messages by id; read-only outside (the hot path reads its size directly). */
  readonly pending = new Map<string, Pending>();

  get size(): number {
    return this.pending.size;
  }

  /** A user message appeared; returns one settled to make room, if any. */
  seen(event: UserMessageEvent): Classified | undefined {
    let evicted: Classified | undefined;
    if (this.pending.size >= CAP) {
      const [oldestId, oldest] = this.pending.entries().next().value as [string, Pending];
      this.pending.delete(oldestId);
      evicted = this.settle(oldest);
    }
    this.pending.set(event.messageId, { event, parts: [] });
    return evicted;
  }

  has(messageId: string): boolean {
    return this.pending.has(messageId);
  }

  /**
   * A part of a held message: `pending` while it is not decisive (a synthetic text, a file), the verdict once it is.
   * Undefined when the message is not held here.
   */
  part(messageId: string, raw: Record<string, unknown>): Classified | "pending" | undefined {
    const held = this.pending.get(messageId);
    if (!held) return undefined;
    const part: MessagePart = {
      type: typeof raw.type === "string" ? raw.type : "unknown",
      text: typeof raw.text === "string" ? raw.text : undefined,
      synthetic: raw.synthetic === true ? true : undefined,
    };
    held.parts.push(part);
    if (!isDecisivePart(part)) return "pending";
    this.pending.delete(messageId);
    return this.settle(held);
  }

  /** The session moved on (busy, output, idle): its held messages are settled with the parts that came. */
  flush(sessionId: string): Classified[] {
    const settled: Classified[] = [];
    for (const [id, held] of this.pending) {
      if (held.event.sessionId !== sessionId) continue;
      this.pending.delete(id);
      settled.push(this.settle(held));
    }
    return settled;
  }

  /** Forgets the session's held messages without settling them (deleted session, missed events). */
  drop(sessionId?: string): void {
    if (sessionId === undefined) return this.pending.clear();
    for (const [id, held] of this.pending) if (held.event.sessionId === sessionId) this.pending.delete(id);
  }

  private settle(held: Pending): Classified {
    return {
      event: held.event,
      claims: claimedInjectionIds(held),
      kind: classifyUserMessage({
        id: held.event.messageId,
        role: "user",
        agent: held.event.agent,
        summary: held.event.summary,
        parts: held.parts,
      }),
    };
  }
}
