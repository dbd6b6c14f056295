// Was it delivered? A continuation whose outcome the enforcer does not know is looked for in the session's messages by
// the message id it was sent with (its text proves nothing: a person can quote it). Bounded like every read of OpenCode.
import type { Lookup } from "../../core/injection-outcome.js";
import type { NewInjection } from "../../store/port.js";
import type { EngineContext } from "../context.js";
import { errorMessage, withTimeout } from "../host-calls.js";

const RECONCILE_WINDOW = 200;
/** OpenCode writes the message of an accepted prompt just after answering; look only once it had time to. */
const LOOKUP_DELAY_MS = 300;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export type Findable = Pick<NewInjection, "id" | "sessionId" | "messageId">;

export class Lookups {
  constructor(private readonly ctx: EngineContext) {}

  /** After a call that may have delivered it: is the continuation in the session? */
  async afterFailure(injection: Findable): Promise<Lookup> {
    await sleep(LOOKUP_DELAY_MS);
    const found = await this.find(injection);
    return found === undefined ? "unreadable" : found ? "found" : "not_found";
  }

  /** True or false when the session's messages could be read; undefined when they could not. */
  async find(injection: Findable): Promise<boolean | undefined> {
    const { ctx } = this;
    try {
      const messages = await withTimeout("messages read", ctx.config.hostTimeoutMs, (s) =>
        ctx.host.getMessages(injection.sessionId, s, RECONCILE_WINDOW),
      );
      if (!Array.isArray(messages)) throw new Error("the host returned no message list");
      return injection.messageId != null && messages.some((m) => m.id === injection.messageId);
    } catch (error) {
      ctx.log("debug", "could not look for a continuation in the session", {
        injectionId: injection.id,
        error: errorMessage(error),
      });
      return undefined;
    }
  }
}
