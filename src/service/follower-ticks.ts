// The lease ticks of a fleet replica's followers. Their engines share the replica's owner id and have no lease timer of
// their own (engine/lease-loop.ts): every round the replica has their armed countdowns, pending continuations, looks
// owed and parks due read here for all of them at once, four statements whatever their number, and each engine handed
// its own rows to adopt, settle, wake and look at. Each engine ticking on its own timer read its own: four statements
// per server per round, the idle load of a fleet growing with its servers.
import type { LogLevel } from "../host/port.js";
import { describeDatabaseFailure } from "../store/open/failure.js";
import type { EngineStore } from "../store/port.js";
import { leaseRowsIn } from "../store/reads.js";
import type { StandaloneService } from "./standalone.js";

type Log = (level: LogLevel, message: string) => void;

export class FollowerTicks {
  /** The rows being read and handed out, if they are: a slow read is not doubled by the next round. */
  private reading: Promise<void> | undefined;
  /** The last read failed: said once, and once more when a read works again. */
  private failing = false;

  constructor(
    private readonly store: EngineStore,
    private readonly log: Log,
  ) {}

  /**
   * Reads the rows of the followers whose engines take a tick now (StandaloneService.ticking), and hands each its own:
   * a follower let go (no longer in `following`), stopping or paused by the time they arrive gets none. Resolves once
   * they are handed out, not once the engines' ticks are over (an engine's tick still running is not doubled either).
   */
  tick(following: ReadonlyMap<string, StandaloneService>): Promise<void> {
    if (this.reading) return this.reading;
    const followers = [...following].filter(([, service]) => service.ticking);
    if (followers.length === 0) return Promise.resolve();
    const scopes = followers.map(([, service]) => service.scope);
    this.reading = this.store
      .read(leaseRowsIn(scopes, Date.now()))
      .then((rows) => {
        if (this.failing) this.log("info", "the followers' lease rows are read again");
        this.failing = false;
        for (const [i, [name, service]] of followers.entries())
          if (following.get(name) === service && service.ticking) void service.enforcer.leaseTick(rows[i]!);
      })
      .catch((error: unknown) => {
        if (!this.failing)
          this.log(
            "warn",
            `could not read the followers' lease rows (retrying every round): ${describeDatabaseFailure(error)}`,
          );
        this.failing = true;
      })
      .finally(() => (this.reading = undefined));
    return this.reading;
  }
}
