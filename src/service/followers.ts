// The servers a fleet replica follows: one StandaloneService each, started when the replica's share gives it a server,
// stopped when the share takes it away (another replica follows it now, it was removed, it went to a replica with
// fewer), and replaced when another replica followed it meanwhile. The countdowns of a server let go are handed back
// once its follower has stopped (countdown-hand-backs.ts). The replica's rounds (fleet.ts) decide when; this is the one
// owner of who follows what.
import { describeDatabaseFailure } from "../store/open/failure.js";
import type { ServerRoster, ServerRow, Share } from "../store/operator/roster.js";
import { CountdownHandBacks } from "./countdown-hand-backs.js";
import type { FleetOptions } from "./fleet-options.js";
import type { LiveFigures } from "./metrics.js";
import { StandaloneService } from "./standalone.js";

export class Followers {
  private readonly following = new Map<string, StandaloneService>();
  /**
   * When each followed server became this replica's (`servers.owned_since`). A held server whose row says a later
   * time was taken by another replica and given back while this one could not see it (starved or frozen past its
   * lease): its follower here lived through that with a stale stream and stale countdowns, and is replaced.
   */
  private readonly followedSince = new Map<string, number | null>();
  /** Followers being stopped (and, for an excess server, handed back once stopped). */
  private readonly letting = new Map<string, Promise<void>>();
  /** The countdowns of servers let go, handed back every round until it works. */
  private readonly handBacks: CountdownHandBacks;
  /** Why each server that could not be followed could not, said once per cause rather than every round. */
  private readonly unfollowable = new Map<string, string>();

  constructor(
    private readonly o: FleetOptions,
    /** The replica's id: the owner of the countdowns its followers arm. */
    private readonly owner: string,
    private readonly roster: ServerRoster,
    /** Keeps a job the replica's stop waits for. */
    private readonly track: (job: Promise<unknown>) => void,
  ) {
    this.handBacks = new CountdownHandBacks(o.store, owner, o.log);
  }

  /** The followers by server name (their lease ticks, readiness). */
  get services(): ReadonlyMap<string, StandaloneService> {
    return this.following;
  }

  /** The servers followed now, by name. */
  get names(): string[] {
    return [...this.following.keys()];
  }

  /** Those whose event stream is connected now (the roster records until when each was). */
  streaming(): string[] {
    return [...this.following].filter(([, service]) => service.streaming).map(([name]) => name);
  }

  /** Their engines now, for the metrics: countdowns held, engines paused, servers followed. */
  figures(): LiveFigures {
    let armed = 0;
    let paused = 0;
    for (const service of this.following.values()) {
      const stats = service.enforcer.stats();
      armed += stats.armed;
      if (stats.mode === "paused_store") paused++;
    }
    return { armed, paused, serversFollowed: this.following.size };
  }

  /** Why they cannot continue anything: none of them answers (following none is fine). Undefined if one answers. */
  noneAnswers(): string | undefined {
    const followed = [...this.following.values()];
    if (followed.length === 0 || followed.some((service) => service.streaming)) return undefined;
    const [first] = followed;
    const why = first!.streamProblem ?? "connecting to its event stream";
    return `none of the ${followed.length} OpenCode server(s) it follows answers (${first!.shownUrl}: ${why})`;
  }

  /** Follows what the share gives this replica, and lets go of the rest. */
  takeShare(share: Share): void {
    const held = new Map(share.held.map((row) => [row.name, row]));
    for (const name of this.following.keys())
      if (!held.has(name)) void this.letGo(name, "another replica follows it now, or it was removed");
    for (const name of share.excess) void this.letGo(name, "rebalanced to a replica with fewer", true);
    for (const [name, row] of held)
      if (this.following.has(name) && this.followedSince.get(name) !== row.ownedSince)
        void this.letGo(name, "another replica followed it while this one was starved; following it afresh");
    for (const [name, row] of held)
      if (!share.excess.includes(name) && !this.following.has(name) && !this.letting.has(name)) this.follow(row);
  }

  /** Hands back the countdowns of servers let go whose followers have stopped; undefined when nothing is owed. */
  handBackCountdowns(): Promise<void> | undefined {
    return this.handBacks.handBack((name) => this.following.has(name) || this.letting.has(name));
  }

  /** Stops every follower (each hands its countdowns back) and waits for those being let go. The names followed. */
  async stopAll(why: string): Promise<string[]> {
    const names = this.names;
    await Promise.all(names.map((name) => this.letGo(name, why)));
    await Promise.allSettled([...this.letting.values()]);
    return names;
  }

  /**
   * Starts following `row`. One that cannot be followed (a row whose URL no client accepts, a start that failed) is
   * said and left out, never kept as followed: the next round tries it again, and the others are followed meanwhile.
   */
  private follow(row: ServerRow): void {
    this.handBacks.forget(row.name);
    let service: StandaloneService;
    try {
      service = this.serviceFor(row);
    } catch (error) {
      this.couldNotFollow(row.name, `cannot follow ${row.url}: ${String(error)}`);
      return;
    }
    this.o.onTakeover?.();
    this.following.set(row.name, service);
    this.followedSince.set(row.name, row.ownedSince);
    this.o.log("info", `taking over server ${row.name} (${row.url}, ${row.directory})`);
    // Not awaited: recovery reads OpenCode, and a slow server must not hold the round (and the heartbeat) up.
    this.track(
      service.start().then(
        () => this.unfollowable.delete(row.name),
        async (error: unknown) => {
          this.couldNotFollow(row.name, `could not start following: ${describeDatabaseFailure(error)}`);
          if (this.following.get(row.name) !== service) return;
          this.following.delete(row.name);
          this.followedSince.delete(row.name);
          await service.stop().catch(() => undefined);
        },
      ),
    );
  }

  private couldNotFollow(name: string, why: string): void {
    if (this.unfollowable.get(name) === why) return;
    this.unfollowable.set(name, why);
    this.o.log("error", `[${name}] ${why} (tried again every round; said again only if the cause changes)`);
  }

  private serviceFor(row: ServerRow): StandaloneService {
    const env = this.o.env ?? process.env;
    const password = row.passwordEnv ? env[row.passwordEnv] : undefined;
    if (row.passwordEnv && password === undefined)
      this.o.log("error", `server ${row.name}: environment variable ${row.passwordEnv} is not set; connecting without`);
    const since = (row.seenUntil ?? row.addedAt) - (this.o.catchUpMarginMs ?? 60_000);
    return new StandaloneService({
      url: row.url,
      directory: row.directory,
      username: row.username ?? undefined,
      password,
      config: this.o.config,
      noticeChannels: this.o.noticeChannels,
      store: this.o.store,
      log: (level, message, extra) => this.o.log(level, message, { ...extra, server: row.name }),
      server: row.name,
      owner: this.owner,
      catchUpSince: since,
      reconnectBaseMs: this.o.reconnectBaseMs,
      reconnectMaxMs: this.o.reconnectMaxMs,
      silenceMs: this.o.silenceMs,
      onReconnected: this.o.onReconnected,
    });
  }

  /**
   * Stops following `name`; with `handBack`, then gives the server up for a replica with fewer. One held beyond the
   * share but no longer followed (its hand-back failed with the database) is given up at once: kept, it would stay
   * this live replica's, followed by nobody, while the others' shares are full.
   */
  private letGo(name: string, why: string, handBack = false): Promise<void> {
    const service = this.following.get(name);
    if (!service) {
      const letting = this.letting.get(name);
      if (letting || !handBack) return letting ?? Promise.resolve();
      return this.handBackServer(name);
    }
    this.following.delete(name);
    this.followedSince.delete(name);
    this.handBacks.owe(name, service.scope);
    this.o.log("info", `letting server ${name} go: ${why}`);
    const started = Date.now();
    const done = (async () => {
      try {
        await service.stop();
        this.o.log("info", `let server ${name} go (${Date.now() - started} ms)`);
      } catch (error) {
        this.o.log("warn", `[${name}] stopping: ${describeDatabaseFailure(error)}`);
      }
      if (handBack) await this.handBackServer(name);
      this.letting.delete(name);
    })();
    this.letting.set(name, done);
    return done;
  }

  private async handBackServer(name: string): Promise<void> {
    try {
      await this.roster.handBack(this.owner, [name]);
    } catch (error) {
      this.o.log("warn", `[${name}] handing back (tried again next round): ${describeDatabaseFailure(error)}`);
    }
  }
}
