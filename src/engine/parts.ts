// The engine's parts, each built on parts built before it, and the typed calls that reach the two built after what
// calls them (a countdown armed → its toast, a countdown due → the injector). The composition root (enforcer.ts) builds
// them here, and so do the tests of one part, so that a part under test is wired exactly as it runs.
import type { EngineContext } from "./context.js";
import { FactGatherer } from "./read/facts.js";
import { Billing } from "./decide/billing.js";
import { Judge } from "./decide/judge.js";
import { Looks } from "./decide/looks.js";
import { StopNotices } from "./decide/stop-notices.js";
import { Injector } from "./deliver/injector.js";
import { Lookups } from "./deliver/lookups.js";
import { Outcomes } from "./deliver/outcomes.js";
import { DeliveryQueue } from "./wait/queue.js";
import { Reconciler } from "./deliver/reconciler.js";
import { StartWatch } from "./deliver/start-watch.js";
import { LeaseLoop } from "./lease-loop.js";
import { LimitParks } from "./wait/limit-parks.js";
import { ParkChecks } from "./wait/park-checks.js";
import { ParkToasts } from "./wait/park-toasts.js";
import { ParkWakes } from "./wait/park-wakes.js";
import { Verifications } from "./wait/verifications.js";
import { NoticeSender, type NoticeChannels } from "./notice-sender.js";
import { RetentionSchedule } from "./retention-schedule.js";
import { EventRouter } from "./see/event-router.js";
import { OwnMessageIds } from "./memory/own-messages.js";
import { SessionMemories } from "./memory/session-memory.js";
import { CountdownToasts } from "./wait/countdown-toasts.js";
import { Countdowns } from "./wait/countdowns.js";

export interface EngineParts {
  queue: DeliveryQueue;
  countdowns: Countdowns;
  toasts: CountdownToasts;
  facts: FactGatherer;
  notices: StopNotices;
  outcomes: Outcomes;
  starts: StartWatch;
  memories: SessionMemories;
  billing: Billing;
  judge: Judge;
  lookups: Lookups;
  reconciler: Reconciler;
  /** The enforcer's own continuations by message id (their echo is not a person writing). */
  ownMessages: OwnMessageIds;
  injector: Injector;
  looks: Looks;
  router: EventRouter;
  retention: RetentionSchedule;
  leases: LeaseLoop;
  sender: NoticeSender;
  verifications: Verifications;
}

export interface PartsOptions {
  /** Sessions remembered at most. */
  memoryCap?: number;
  /** Where notices go; none: stops are still told (the toast), nothing is sent. */
  noticeChannels?: NoticeChannels;
  /** False: the owner id is the caller's, who keeps it alive and renews its leases (lease-loop.ts). */
  keepsOwner?: boolean;
}

const NO_CHANNELS: NoticeChannels = {
  channels: [],
  deliver: () => Promise.resolve({ ok: false, retryable: false, error: "no channels" }),
};

/** Sessions remembered at most (the oldest without live work are forgotten first). */
export const MEMORY_CAP = 5000;

export function buildParts(ctx: EngineContext, options: PartsOptions = {}): EngineParts {
  const { config, host, clock } = ctx;
  const noticeChannels = options.noticeChannels ?? NO_CHANNELS;
  const sender = new NoticeSender(ctx, noticeChannels);
  const queue = new DeliveryQueue(config.maxConcurrentInjections, (error) => ctx.failed("continuation", error));
  const countdowns = new Countdowns(ctx);
  const toasts = new CountdownToasts(ctx, countdowns);
  const ownMessages = new OwnMessageIds(ctx.store);
  const facts = new FactGatherer(host, config.hostTimeoutMs, () => clock.monotonic(), ownMessages);
  const notices = new StopNotices(ctx, { channels: noticeChannels.channels, written: () => sender.wake() });
  const outcomes = new Outcomes(ctx, countdowns, notices);
  const starts = new StartWatch(ctx, facts, outcomes);
  const pinned = (id: string) => countdowns.has(id) || queue.isBusy(id) || starts.has(id);
  const memories = new SessionMemories(options.memoryCap ?? MEMORY_CAP, pinned);
  const billing = new Billing(ctx, facts);
  const judge = new Judge(ctx, memories, queue, notices, billing);
  const lookups = new Lookups(ctx);
  const reconciler = new Reconciler(ctx, lookups, outcomes, queue);
  const limitParks = new LimitParks(ctx);
  const verifications = new Verifications(ctx);
  const looks = new Looks(ctx, {
    memories,
    countdowns,
    judge,
    facts,
    billing,
    queue,
    starts,
    limitParks,
    verifications,
  });
  const injected = {
    memories,
    queue,
    countdowns,
    judge,
    facts,
    lookups,
    reconciler,
    outcomes,
    starts,
    ownMessages,
    looks,
  };
  const injector = new Injector(ctx, injected);
  countdowns.connect({ armed: (armed) => toasts.show(armed), due: (armed, info) => injector.due(armed, info) });
  const parkToasts = new ParkToasts(ctx);
  ctx.events.on("session_parked", (park) => parkToasts.parked(park));
  const router = new EventRouter(
    ctx,
    { memories, countdowns, looks, starts, ownMessages, limitParks, verifications },
    clock.now(),
  );
  const retention = new RetentionSchedule(ctx);
  const parkWakes = new ParkWakes(ctx);
  const parkChecks = new ParkChecks(ctx);
  const leases = new LeaseLoop(
    ctx,
    { countdowns, reconciler, looks, parkWakes, parkChecks, verifications },
    options.keepsOwner ?? true,
  );
  const parts = {
    queue,
    countdowns,
    toasts,
    facts,
    notices,
    outcomes,
    starts,
    memories,
    billing,
    judge,
    lookups,
    reconciler,
  };
  return { ...parts, ownMessages, injector, looks, router, retention, leases, sender, verifications };
}
