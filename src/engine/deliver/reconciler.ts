// Continuations whose outcome the enforcer does not know, settled by looking for them in the session: a `pending` row
// left by a process that died (at start and on lease ticks: `sent` if found, else `unknown` and an attempt), and an
// earlier `failed` or `unknown` one found after all before a new one goes out (it becomes `sent`, and nothing is sent
// on top of it).
import { pendingIn, uncertainIn } from "../../store/reads.js";
import type { MessageFacts } from "../../core/messages.js";
import type { InjectionRow } from "../../store/schema.js";
import type { EngineContext } from "../context.js";
import type { Lookups } from "./lookups.js";
import type { Outcomes } from "./outcomes.js";
import type { DeliveryQueue } from "../wait/queue.js";

/** How far back an earlier `failed`/`unknown` continuation is still looked for before a new one goes out. */
const UNCERTAIN_WINDOW_MS = 3_600_000;

/**
 * The call a `pending` row stands for is over, whoever made it: its lease covers the prompt's timeout and OpenCode's.
 * Still pending then, its outcome was lost, and a live owner may never settle it (a fleet replica frozen mid-call,
 * woken to find its server followed by another). PostgreSQL judges an owner by its heartbeat alone, so it is said here.
 */
function callOver(row: InjectionRow, now: number): boolean {
  return row.leaseUntil !== null && row.leaseUntil < now;
}

export class Reconciler {
  constructor(
    private readonly ctx: EngineContext,
    private readonly lookups: Lookups,
    private readonly outcomes: Outcomes,
    private readonly queue: DeliveryQueue,
  ) {}

  /**
   * Before a new continuation goes out: an earlier `failed` or `unknown` one of this session that is in `messages`
   * arrived after all. It becomes `sent` (audit `reconciled: found`); the caller must not send another on top.
   * Runs in the session's lane.
   */
  async confirmEarlier(sessionId: string, messages: MessageFacts | undefined): Promise<InjectionRow | undefined> {
    const { ctx } = this;
    if (!messages) return undefined;
    for (const row of await ctx.store.read(uncertainIn(sessionId, ctx.clock.now() - UNCERTAIN_WINDOW_MS))) {
      const arrived =
        (row.messageId !== null && messages.ownMessageIds.includes(row.messageId)) ||
        messages.ownInjectionIds.includes(row.id);
      if (!arrived) continue;
      await this.outcomes.record(row, { kind: "arrived", was: row.status === "failed" ? "failed" : "unknown" });
      return row;
    }
    return undefined;
  }

  /**
   * Settles the `pending` injections of this scope whose owner is gone, or silent past the lease it took for the call:
   * those of `pending` when the caller read them (a fleet replica, for all its engines at once), else read now.
   */
  async reconcilePending(pending?: readonly InjectionRow[]): Promise<void> {
    const { ctx } = this;
    if (!ctx.lifecycle.deciding) return;
    const now = ctx.clock.now();
    const rows = (pending ?? (await ctx.store.read(pendingIn(ctx.followed)))).filter((row) =>
      row.owner === ctx.owner
        ? !this.queue.isBusy(row.sessionId)
        : callOver(row, now) || !ctx.store.ownerAlive(row.owner, row.leaseUntil, now),
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
    const found = await this.lookups.find(row);
    if (found === undefined) {
      ctx.log("warn", "cannot reconcile a pending continuation yet", { injectionId: row.id });
      return;
    }
    await ctx.lanes.run(row.sessionId, async () => {
      const recorded = await this.outcomes.record(row, { kind: "reconciled", found, firedAt: row.createdAt });
      if (!found && recorded?.next)
        await this.outcomes.retry(row.sessionId, recorded.next, undefined, { retryOf: row.id, reason: "not_found" });
    });
  }
}
