// Delivers the notices of this engine's scope from the outbox (store/changes/tell-stop.ts writes them): it takes the
// due ones for a lease, decides each one's turn (core/notice-delivery.ts: a newer one stands for it, the rate limit
// holds it, or it goes with the older ones folded in), hands it to its channel, and records what came of it. It looks
// when woken (a stop here wrote notices), and every few seconds for the rest: retries that came due, notices another
// process wrote, ones left by a process that died or restarted. Of several processes on one database, one takes each
// notice; a process that dies holding one leaves it to another once its lease runs out.
import { afterAttempt, noticeTurn, NOTICE_WINDOW_MS, type AttemptResult } from "../core/notice-delivery.js";
import { sessionPageUrl, type Notice, type NoticeKind } from "../core/notices.js";
import { claimNotices } from "../store/changes/claim-notices.js";
import { settleNotice, type NoticeOutcome } from "../store/changes/settle-notice.js";
import { noticeTurnFacts } from "../store/reads.js";
import type { NoticeRow } from "../store/schema.js";
import { BoundedMap } from "./bounded-map.js";
import type { EngineContext } from "./context.js";
import { errorMessage, withTimeout } from "./host-calls.js";
import { loopModes } from "./modes.js";

/** One channel as the sender knows it: the adapters build it from the `notify` option (src/notices). */
export interface NoticeChannel {
  name: string;
  /** `webhook`, `ntfy`, `slack`, `discord`, `command`: the audit rows and the metrics name it. */
  type: string;
  kinds: readonly NoticeKind[];
  /** The longest one delivery may take: the lease a notice is held for outlasts it. */
  timeoutMs: number;
}

/** The channels, and how a notice reaches one of them (never throws: a failure is a result). */
export interface NoticeChannels {
  readonly channels: readonly NoticeChannel[];
  deliver(channel: string, notice: Notice): Promise<AttemptResult>;
}

/** How often the outbox is read when nothing wakes the sender. */
export const NOTICE_POLL_MS = 5000;
/** Notices taken at once. */
const BATCH = 20;
const TIMER = "notices";

export class NoticeSender {
  private readonly byName: ReadonlyMap<string, NoticeChannel>;
  private readonly leaseMs: number;
  private readonly modes = loopModes("the notice sender");
  /** The round reading the outbox now, if one is: a stop waits for it. */
  private round: Promise<void> | undefined;
  /** Woken while a round ran: one more runs right after it. */
  private roundOwed = false;
  /** Session titles read from OpenCode, for the notices' bodies. */
  private readonly titles = new BoundedMap<string, string | null>(500);

  constructor(
    private readonly ctx: EngineContext,
    private readonly channels: NoticeChannels,
  ) {
    this.byName = new Map(channels.channels.map((c) => [c.name, c]));
    const longest = Math.max(0, ...channels.channels.map((c) => c.timeoutMs));
    this.leaseMs = Math.max(ctx.config.leaseMs, longest + 5000);
  }

  /** Starts reading the outbox (at once: notices left by a restart go now); nothing without channels. */
  start(): Promise<void> {
    return this.modes.start(async () => {
      if (this.byName.size > 0) this.schedule(0);
    });
  }

  /** Notices were written: look now. */
  wake(): void {
    if (this.modes.is("running") && this.byName.size > 0) this.schedule(0);
  }

  /** No more rounds; resolves once the round in flight (its deliveries recorded) is over. Called by the engine's root. */
  stop(): Promise<void> {
    return this.modes.stop(async () => {
      this.ctx.timers.cancel(TIMER);
      // Its failure, if it fails, is the background job's to report.
      await this.round?.catch(() => undefined);
    });
  }

  private schedule(delayMs: number): void {
    this.ctx.timers.schedule(TIMER, delayMs, () => void this.ctx.track(this.readOutbox()));
  }

  /** One read of the outbox; woken while one runs, one more runs after it. */
  private readOutbox(): Promise<void> {
    if (this.round) {
      this.roundOwed = true;
      return Promise.resolve();
    }
    this.round = this.deliverRound().finally(() => (this.round = undefined));
    return this.round;
  }

  private async deliverRound(): Promise<void> {
    let full = false;
    try {
      if (this.ctx.lifecycle.deciding) full = await this.deliverDue();
    } finally {
      const soon = full || this.roundOwed;
      this.roundOwed = false;
      if (this.modes.is("running")) this.schedule(soon ? 0 : NOTICE_POLL_MS);
    }
  }

  /** Takes the due notices and delivers each; true when the batch was full (more may be due). */
  private async deliverDue(): Promise<boolean> {
    const { ctx } = this;
    const names = [...this.byName.keys()];
    const claim = claimNotices(ctx.followed, names, ctx.owner, ctx.clock.now(), this.leaseMs, BATCH);
    const taken = await ctx.store.change(claim);
    const failed = (await Promise.allSettled(taken.map((notice) => this.deliverOne(notice)))).find(
      (result) => result.status === "rejected",
    );
    if (failed) throw failed.reason;
    return taken.length === BATCH;
  }

  private async deliverOne(row: NoticeRow): Promise<void> {
    const { ctx } = this;
    const channel = this.byName.get(row.channel)!;
    const now = ctx.clock.now();
    const facts = await ctx.store.read(noticeTurnFacts(row.sessionId, row.channel, now - NOTICE_WINDOW_MS));
    const turn = noticeTurn(row, facts.pending, facts.sentAt, ctx.config.noticesPerHour, now);
    if (!turn.send) return this.settle(row, channel, { heldUntil: turn.until, why: turn.why });
    const notice = await this.noticeOf(row, facts.pending, turn.folded).catch(() => undefined);
    // Written by this code, so never expected: a body that does not read is given up, not retried for a day.
    if (!notice)
      return this.settle(row, channel, {
        sent: false,
        error: "its body is not readable",
        body: row.body,
        deliveryMs: 0,
      });
    const body = JSON.stringify(notice);
    const started = ctx.clock.monotonic();
    const result = await this.attempt(channel, notice);
    const deliveryMs = Math.round(ctx.clock.monotonic() - started);
    const after = afterAttempt(result, row.attempts + 1, row.createdAt, ctx.clock.now());
    if (after.sent) return this.settle(row, channel, { sent: true, body, folded: turn.folded, deliveryMs });
    ctx.log("warn", `a notice could not be delivered to the ${channel.name} channel: ${after.error}`, {
      sessionId: row.sessionId,
      notice: row.noticeId,
      ...(after.retryAt === undefined ? { final: true } : { retryInMs: after.retryAt - ctx.clock.now() }),
    });
    return this.settle(row, channel, { sent: false, error: after.error, retryAt: after.retryAt, body, deliveryMs });
  }

  private async attempt(channel: NoticeChannel, notice: Notice): Promise<AttemptResult> {
    try {
      return await this.channels.deliver(channel.name, notice);
    } catch (error) {
      return { ok: false, retryable: true, error: errorMessage(error) };
    }
  }

  private async settle(row: NoticeRow, channel: NoticeChannel, outcome: NoticeOutcome): Promise<void> {
    const { ctx } = this;
    const settled = await ctx.store.change(settleNotice(row, ctx.owner, outcome, channel.type, ctx.clock.now()));
    if (!settled) ctx.log("debug", "a notice was no longer this process's to settle", { notice: row.id });
  }

  /** The notice as it goes out: the ones it stands for folded in, and the session's title when OpenCode tells it. */
  private async noticeOf(row: NoticeRow, pending: readonly NoticeRow[], folded: readonly string[]): Promise<Notice> {
    const notice = JSON.parse(row.body) as Notice;
    const standsFor = pending.filter((p) => folded.includes(p.id));
    if (standsFor.length > 0)
      notice.folded = standsFor.map((p) => {
        const earlier = JSON.parse(p.body) as Notice;
        return { id: earlier.id, kind: earlier.kind, reason: earlier.reason, text: earlier.text, at: earlier.at };
      });
    if (!notice.session.title) {
      const title = await this.titleOf(row.sessionId);
      if (title) notice.session.title = title;
    }
    const page = this.ctx.config.dashboardUrl;
    if (page) notice.session.url = sessionPageUrl(page, row.sessionId);
    return notice;
  }

  private async titleOf(sessionId: string): Promise<string | undefined> {
    const known = this.titles.get(sessionId);
    if (known !== undefined) return known ?? undefined;
    const { ctx } = this;
    try {
      const session = await withTimeout("session", ctx.config.hostTimeoutMs, (signal) =>
        ctx.host.getSession(sessionId, signal),
      );
      this.titles.set(sessionId, session?.title ?? null);
      return session?.title;
    } catch {
      return undefined;
    }
  }
}
