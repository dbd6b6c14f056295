// A fleet replica: one of several `todo-continuation serve --db postgres://…` processes that share the OpenCode servers
// listed in the `servers` table. Every round (a third of the lease) it says it is alive, takes its share of the
// servers, has each one it holds followed and those it lost or holds beyond its share let go (followers.ts, who follows
// what), runs its followers' lease ticks on rows read once for all of them, and records until when it had each server's event
// stream. A replica that dies stops its heartbeat; once its lease has run out the others share its servers again,
// adopt its countdowns and catch up on the sessions that changed meanwhile.
import { describeDatabaseFailure } from "../store/open/failure.js";
import { newOwnerId, registerOwner, unregisterOwner } from "../store/owner.js";
import { renewLeases } from "../store/changes/renew-leases.js";
import type { OperatorStore } from "../store/operator/operator.js";
import type { ServerRoster } from "../store/operator/roster.js";
import type { LiveFigures } from "./metrics.js";
import { startStopModes, type Modes, type ModeTable } from "../engine/modes.js";
import { Followers } from "./followers.js";
import { FollowerTicks } from "./follower-ticks.js";
import type { FleetOptions, FleetStats } from "./fleet-options.js";
import type { Readiness } from "./status-server.js";

/**
 * How many leases a server just taken over stays with this replica before it may be handed to a newcomer: long enough
 * for its follower to fire the countdowns it adopted and catch up, instead of handing them on half done.
 */
const SETTLE_LEASES = 2;
/** Past a lease's end by the database's clock: the lease is "fresh" up to and including its last millisecond. */
const LAPSE_MARGIN_MS = 5;

/**
 * What the replica is doing, changed only through its `Modes` (engine/modes.ts), which refuses a change this table does
 * not allow:
 *
 *   idle ──start()──▶ starting ──▶ running
 *     │                  │            │
 *     └──────────────────┴──stop()────┴──▶ stopping ──▶ stopped
 *
 * starting  it said it is alive, waits for replicas starting with it, takes its first share; a stop() now waits for it.
 * running   a round every third of the lease (and at another replica's lapse); how the rounds fare is readiness's.
 * stopping  no new round; its followers stop and its servers are handed back. stopped: for good.
 */
export type ReplicaMode = "idle" | "starting" | "running" | "stopping" | "stopped";

const REPLICA_MODES: ModeTable<ReplicaMode> = {
  idle: ["starting", "stopping"],
  starting: ["running", "stopping"],
  running: ["stopping"],
  stopping: ["stopped"],
  stopped: [],
};

export class FleetReplica {
  readonly id = newOwnerId();
  private readonly roster: ServerRoster;
  private readonly followers: Followers;
  private readonly tasks = new Set<Promise<unknown>>();
  private timer: ReturnType<typeof setInterval> | undefined;
  /** A round at the moment another replica's lease runs out, when that comes before the next regular round. */
  private atLapse: ReturnType<typeof setTimeout> | undefined;
  private round: Promise<void> | undefined;
  /** A round at a lapse came while another ran: one more runs once that one ends. */
  private roundOwed = false;
  private beating: Promise<void> | undefined;
  private replicas = 0;
  private lastRoundAt = 0;
  /** When a round last worked from start to end: the heartbeat and the leases are this fresh. */
  private lastGoodRoundAt = 0;
  private failing = false;
  private readonly ticks: FollowerTicks;
  private readonly modes: Modes<ReplicaMode>;

  private readonly liveness: OperatorStore;

  constructor(private readonly o: FleetOptions) {
    this.liveness = o.liveness ?? o.store;
    if (!this.liveness.roster)
      throw new Error(`a fleet shares its servers through a PostgreSQL database; ${this.liveness.location} is not one`);
    this.roster = this.liveness.roster;
    this.ticks = new FollowerTicks(o.store, o.log);
    this.followers = new Followers(o, this.id, this.roster, (job) => this.track(job));
    this.modes = startStopModes(`the fleet replica ${this.id}`, REPLICA_MODES);
  }

  /**
   * Says it is alive, waits a moment for replicas starting at the same time to say so too (the first to share would
   * otherwise take every server and hand most of them back a round later), takes its first share, then shares again
   * every third of the lease. Every call returns the same start; a replica that was stopped cannot start again.
   */
  start(): Promise<void> {
    return this.modes.start(() => this.joinTheFleet());
  }

  /**
   * Stops what it started, in order: its rounds (the one in flight finishes), then its followers, then hands every
   * server back and says this replica is gone, so that others take over at once. A start in progress finishes first. Every call returns the same stop, which resolves once the replica is stopped.
   */
  stop(): Promise<void> {
    return this.modes.stop(() => this.leaveTheFleet());
  }

  get mode(): ReplicaMode {
    return this.modes.mode;
  }

  private async joinTheFleet(): Promise<void> {
    registerOwner(this.id);
    const { period } = this;
    try {
      await this.o.store.heartbeat(this.id, this.o.config.leaseMs);
      await new Promise((resolve) => setTimeout(resolve, Math.min(period, this.o.settleMs ?? 2000)));
    } catch {
      // The first round reports a database that does not answer.
    }
    await this.tick();
    if (this.modes.stopAsked) return;
    this.modes.enter("running");
    this.timer = setInterval(() => void this.tick(), period);
    this.timer.unref?.();
  }

  stats(): FleetStats {
    return { id: this.id, following: this.followers.names.sort(), replicas: this.replicas };
  }

  /** The followers' engines now, for the metrics: countdowns held, engines paused, servers followed. */
  figures(): LiveFigures {
    return this.followers.figures();
  }

  /**
   * Ready while its last round (heartbeat and share) worked within the lease: then it holds the servers it follows,
   * or has none to hold yet; and while one at least of the servers it follows answers. Not ready while starting,
   * failing or stopping.
   */
  readiness(now = Date.now()): Readiness {
    if (this.modes.stopAsked) return { ready: false, reason: "stopping" };
    if (this.lastGoodRoundAt === 0) return { ready: false, reason: "starting: no round has worked yet" };
    if (this.failing) return { ready: false, reason: "the database does not answer: its rounds fail" };
    const age = now - this.lastGoodRoundAt;
    if (age > this.o.config.leaseMs)
      return { ready: false, reason: `no round has worked for ${age} ms (lease ${this.o.config.leaseMs} ms)` };
    // Following servers none of which answers, it can continue nothing; following none (others hold them all) is fine.
    const noneAnswers = this.followers.noneAnswers();
    return noneAnswers ? { ready: false, reason: noneAnswers } : { ready: true };
  }

  private async leaveTheFleet(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    clearTimeout(this.atLapse);
    await this.round;
    // A heartbeat landing after the retirement would say this replica alive again for a lease.
    await this.beating?.catch(() => undefined);
    const names = await this.followers.stopAll("this replica is stopping");
    await Promise.allSettled([...this.tasks]);
    try {
      await this.roster.handBack(this.id, names);
      await this.o.store.retire(this.id);
    } catch (error) {
      this.o.log(
        "warn",
        `could not hand the servers back (others take them after the lease): ${describeDatabaseFailure(error)}`,
      );
    }
    unregisterOwner(this.id);
  }

  /** How often a round runs: a third of the lease, so that a live replica renews its lease twice before it ends. */
  private get period(): number {
    return Math.max(100, Math.floor(this.o.config.leaseMs / 3));
  }

  /**
   * One round; a round still running when the next is due is not doubled, but the heartbeat and the renewal go out
   * anyway: a round held up past the lease (by a lock another replica's share holds, or a busy pool) would let the
   * others take this live replica's servers, and their catch-ups would hold the others' rounds up in turn.
   */
  private tick(atLapse = false): Promise<void> {
    if (this.modes.stopAsked) return Promise.resolve();
    const alive = this.keepAlive();
    if (this.round) {
      // The round still running reports a database that fails.
      alive.catch(() => undefined);
      // It read the shares before the lapse: the dead replica's servers are taken by one more round right after it,
      // not a regular round later.
      if (atLapse) this.roundOwed = true;
      return this.round;
    }
    this.round = this.share(alive).finally(() => {
      this.round = undefined;
      if (this.roundOwed) {
        this.roundOwed = false;
        void this.tick();
      }
    });
    return this.round;
  }

  /**
   * The heartbeat, then the leases of the countdowns this replica holds renewed: its followers' engines share its
   * owner id and leave both to it, once per replica whatever the number of servers. A slow one is joined, not doubled.
   * The heartbeat goes through the followers' store (on its own connection there): it also reads who is alive, and
   * that view is the one their engines judge other owners' countdowns by; written through another store, theirs kept
   * whatever it first saw, and a replica once seen alive was never adopted from.
   */
  private keepAlive(): Promise<void> {
    const { leaseMs } = this.o.config;
    this.beating ??= (async () => {
      await this.o.store.heartbeat(this.id, leaseMs);
      await this.liveness.change(renewLeases(this.id, Date.now() + leaseMs));
    })().finally(() => (this.beating = undefined));
    return this.beating;
  }

  private async share(alive: Promise<void>): Promise<void> {
    const started = Date.now();
    const { leaseMs } = this.o.config;
    // A round that starts or ends late says this replica is starved (CPU, event loop, database): past the lease, the
    // others have taken its servers. Said, so that a lapse in the logs has its cause next to it.
    const lateMs = this.lastRoundAt ? started - this.lastRoundAt - Math.floor(leaseMs / 3) : 0;
    this.lastRoundAt = started;
    if (lateMs > leaseMs / 3) this.o.log("warn", `fleet round ${lateMs} ms late (lease ${leaseMs} ms)`);
    try {
      await alive;
      const share = await this.roster.share(this.id, SETTLE_LEASES * leaseMs);
      this.replicas = share.replicas;
      this.roundAtLapse(share.nextLapseInMs);
      this.followers.takeShare(share);
      // Not awaited: a read queued behind a burst of changes on the shared pool must not hold the next heartbeat up.
      this.track(this.ticks.tick(this.followers.services));
      await this.roster.seen(this.id, this.followers.streaming());
      // Not awaited either: after a freeze every follower may be let go at once, and the shared pool is busiest then.
      const handingBack = this.followers.handBackCountdowns();
      if (handingBack) this.track(handingBack);
      if (this.failing) this.o.log("info", "the fleet's database answers again");
      this.failing = false;
      this.lastGoodRoundAt = Date.now();
      const tookMs = Date.now() - started;
      if (tookMs > leaseMs / 3) this.o.log("warn", `fleet round took ${tookMs} ms (lease ${leaseMs} ms)`);
    } catch (error) {
      // The followers' engines pause on their own while the database fails; the heartbeat lapsing hands this
      // replica's servers to the others, whose claims the database then fences. Said once, not every round.
      if (!this.failing)
        this.o.log("warn", `fleet round failed (retrying every round): ${describeDatabaseFailure(error)}`);
      this.failing = true;
    }
  }

  /**
   * A live replica renews its lease every round, so one whose lease runs out before this replica's next round has
   * missed two: most likely dead. Looking again the moment it runs out, instead of up to a round later, is what lets
   * its servers and countdowns be taken over within the lease.
   */
  private roundAtLapse(lapseInMs: number | null): void {
    clearTimeout(this.atLapse);
    this.atLapse = undefined;
    if (lapseInMs === null || lapseInMs >= this.period) return;
    this.atLapse = setTimeout(() => void this.tick(true), Math.max(0, lapseInMs) + LAPSE_MARGIN_MS);
    this.atLapse.unref?.();
  }

  private track(job: Promise<unknown>): void {
    this.tasks.add(job);
    void job.finally(() => this.tasks.delete(job));
  }
}
