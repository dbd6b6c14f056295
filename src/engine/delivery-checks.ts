// Was it delivered? Every way the enforcer finds out what became of a continuation whose outcome it does not know: a
// call that failed in a way that may have delivered it (looked for in the session's messages), a `pending` row left by
// a process that died (reconciled at start and on lease ticks), an earlier `failed`/`unknown` one found in the session
// before a new one goes out, and a sent one whose turn never started.
import type { HostFacts } from "../core/decision-input.js";
import { inspectMessages, type MessageFacts } from "../core/messages.js";
import type { Lookup } from "../core/injection-outcome.js";
import { recordOutcome } from "../store/changes/record-outcome.js";
import { q } from "../store/script.js";
import type { NewInjection } from "../store/port.js";
import type { InjectionRow } from "../store/schema.js";
import type { EngineContext } from "./context.js";
import { errorMessage, withTimeout } from "./host-calls.js";
import type { Injector } from "./injector.js";
import { BoundedMap } from "./session-memory.js";

const RECONCILE_WINDOW = 200;
/** OpenCode writes the message of an accepted prompt just after answering; look only once it had time to. */
const LOOKUP_DELAY_MS = 300;
/** How far back an earlier `failed`/`unknown` continuation is still looked for before a new one goes out. */
const UNCERTAIN_WINDOW_MS = 3_600_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Findable = Pick<NewInjection, "id" | "sessionId" | "messageId">;

export class DeliveryChecks {
  /** Continuations already counted as never started (each counts once). */
  private readonly notStartedSeen = new BoundedMap<string, true>(1000);

  constructor(
    private readonly ctx: EngineContext,
    private readonly injector: Injector,
  ) {}

  /** After a call that may have delivered it: is the continuation in the session? */
  async lookUpAfterFailure(injection: Findable): Promise<Lookup> {
    await sleep(LOOKUP_DELAY_MS);
    const found = await this.lookUp(injection);
    return found === undefined ? "unreadable" : found ? "found" : "not_found";
  }

  /**
   * Before a new continuation goes out: an earlier `failed` or `unknown` one of this session that is in `messages`
   * arrived after all. It becomes `sent` (audit `reconciled: found`); the caller must not send another on top.
   * Runs in the session's lane.
   */
  async confirmEarlier(sessionId: string, messages: MessageFacts | undefined): Promise<InjectionRow | undefined> {
    const { ctx } = this;
    if (!messages) return undefined;
    const now = ctx.clock.now();
    for (const row of await ctx.store.read(q.uncertainIn(sessionId, now - UNCERTAIN_WINDOW_MS))) {
      const arrived =
        (row.messageId !== null && messages.ownMessageIds.includes(row.messageId)) ||
        messages.ownInjectionIds.includes(row.id);
      if (!arrived) continue;
      const was = row.status === "failed" ? "failed" : "unknown";
      await ctx.store.change(recordOutcome(row, { kind: "arrived", was }, now, ctx.config));
      return row;
    }
    return undefined;
  }

  /** Settles the `pending` injections of this scope whose owner is gone, or silent past the lease it took for the call. */
  async reconcilePending(): Promise<void> {
    const { ctx } = this;
    if (!ctx.lifecycle.deciding) return;
    const now = ctx.clock.now();
    const rows = (await ctx.store.read(q.pendingIn(ctx.followed))).filter((row) =>
      row.owner === ctx.owner
        ? !this.injector.isBusy(row.sessionId)
        : !ctx.store.ownerAlive(row.owner, row.leaseUntil, now),
    );
    for (const row of rows) {
      if (!ctx.lifecycle.deciding) return;
      await this.reconcile(row);
    }
  }

  /**
   * `sent` if its id is in the session's messages, else `unknown` (an attempt, retried by the policy). Left `pending`
   * when the messages cannot be read now.
   */
  private async reconcile(row: InjectionRow): Promise<void> {
    const { ctx } = this;
    const found = await this.lookUp(row);
    if (found === undefined) {
      ctx.log("warn", "cannot reconcile a pending continuation yet", { injectionId: row.id });
      return;
    }
    await ctx.lanes.run(row.sessionId, async () => {
      const outcome = { kind: "reconciled", found } as const;
      const recorded = await ctx.store.change(recordOutcome(row, outcome, ctx.clock.now(), ctx.config));
      if (!found && recorded?.next)
        await this.injector.afterFailure(row.sessionId, recorded.next, undefined, {
          retryOf: row.id,
          reason: "not_found",
        });
    });
  }

  /**
   * The last continuation sent is the session's last message, nothing answered it, and the session is idle well
   * after it went out: OpenCode accepted it and never started the turn (seen on a look after a restart or a missed
   * event). Records the failure and returns true. Runs in the session's lane.
   */
  async unstartedContinuation(sessionId: string, facts: HostFacts, armedHere: boolean): Promise<boolean> {
    const { ctx } = this;
    if (facts.messages?.replyToLastInjection !== "none" || facts.status !== "idle" || armedHere) return false;
    const last = await this.lastSent(sessionId, facts);
    const now = ctx.clock.now();
    if (!last || this.notStartedSeen.has(last.id) || now - last.createdAt < ctx.config.startTimeoutMs) return false;
    this.injector.starts.drop(sessionId);
    await this.injector.notStarted(sessionId, last.id, now - last.createdAt);
    return true;
  }

  /** True the first time an injection is counted as never started. */
  firstNotStarted(injectionId: string): boolean {
    if (this.notStartedSeen.has(injectionId)) return false;
    this.notStartedSeen.set(injectionId, true);
    return true;
  }

  private async lastSent(sessionId: string, facts: HostFacts): Promise<{ id: string; createdAt: number } | undefined> {
    const messageId = facts.messages?.ownMessageIds.at(-1);
    const injectionId = facts.messages?.ownInjectionIds.at(-1);
    const row = injectionId ? await this.ctx.store.read(q.injection(injectionId)) : undefined;
    if (
      !row ||
      row.sessionId !== sessionId ||
      row.status !== "sent" ||
      (messageId && row.messageId && row.messageId !== messageId)
    )
      return undefined;
    return { id: row.id, createdAt: row.createdAt };
  }

  /** True or false when the session's messages could be read; undefined when they could not. */
  private async lookUp(injection: Findable): Promise<boolean | undefined> {
    const { ctx } = this;
    try {
      const messages = await withTimeout("messages read", ctx.config.hostTimeoutMs, (s) =>
        ctx.host.getMessages(injection.sessionId, s, RECONCILE_WINDOW),
      );
      if (!Array.isArray(messages)) throw new Error("the host returned no message list");
      // Our message is the one with the id we chose, or one whose text carries the injection's id.
      if (injection.messageId && messages.some((m) => m.id === injection.messageId)) return true;
      return inspectMessages(messages).ownInjectionIds.includes(injection.id);
    } catch (error) {
      ctx.log("debug", "could not look for a continuation in the session", {
        injectionId: injection.id,
        error: errorMessage(error),
      });
      return undefined;
    }
  }
}
