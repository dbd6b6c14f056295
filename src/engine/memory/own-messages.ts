// Which user messages are the enforcer's own continuations: those sent with a message id it chose. This process
// remembers the ids it chose; any other message whose text claims an injection (a continuation of another process, or
// of this one before a restart — or a person quoting one) is ours only if the database recorded that injection with
// this very message id. Text alone never makes a message ours.
import { injection } from "../../store/reads.js";
import { claimedInjectionIds, type OwnMessages, type SessionMessage } from "../../core/messages.js";
import type { EngineStore } from "../../store/port.js";
import { BoundedMap } from "../bounded-map.js";

const CHOSEN_CAP = 1000;
const CONFIRMED_CAP = 5000;

type Claimant = Pick<SessionMessage, "id" | "role" | "parts">;

export class OwnMessageIds implements OwnMessages {
  /** Message id → injection id, chosen by this process. */
  private readonly chosen = new BoundedMap<string, string>(CHOSEN_CAP);
  /** Message id → the injection the database confirms it carried, or null when its claim was not ours. */
  private readonly confirmed = new BoundedMap<string, string | null>(CONFIRMED_CAP);

  constructor(private readonly store: Pick<EngineStore, "read">) {}

  /** Recorded before the prompt call, so that its echo is known for ours from the first event. */
  choose(messageId: string, injectionId: string): void {
    this.chosen.set(messageId, injectionId);
  }

  /** This process chose the id. */
  chose(messageId: string): boolean {
    return this.chosen.has(messageId);
  }

  get(messageId: string): string | undefined {
    return this.chosen.get(messageId) ?? this.confirmed.get(messageId) ?? undefined;
  }

  /**
   * Settles the claims of these messages in the database, each message once. The injection row is written before
   * its prompt call, so a message not matching it now never will. Throws when the database cannot be read.
   */
  async confirm(sessionId: string, messages: readonly Claimant[]): Promise<void> {
    for (const message of messages)
      if (message.role === "user") await this.confirmClaims(sessionId, message.id, claimedInjectionIds(message));
  }

  /** Whether the message is ours, its claims (the injection ids its text carries) checked in the database. */
  async confirmClaims(sessionId: string, messageId: string, claims: readonly string[]): Promise<boolean> {
    if (this.chosen.has(messageId)) return true;
    const known = this.confirmed.get(messageId);
    if (known !== undefined) return known !== null;
    if (claims.length === 0) return false;
    let injectionId: string | null = null;
    for (const claim of claims) {
      const row = await this.store.read(injection(claim));
      if (row?.sessionId === sessionId && row.messageId === messageId) injectionId = claim;
    }
    this.confirmed.set(messageId, injectionId);
    return injectionId !== null;
  }
}
