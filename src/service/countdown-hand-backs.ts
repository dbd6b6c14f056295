// The countdowns of the servers a fleet replica let go, handed back (owner cleared) for their new followers to adopt
// at once. A follower hands its own back as it stops; one that could not (the database failing right then) would leave
// them held by a replica that is alive and no longer follows them, so that nobody ever adopted them.
import { releaseLeases } from "../store/changes/release-leases.js";
import { describeDatabaseFailure } from "../store/open/failure.js";
import type { OperatorStore } from "../store/operator/operator.js";
import type { Scope } from "../store/port.js";
import type { LogLevel } from "../host/port.js";

type Log = (level: LogLevel, message: string) => void;

export class CountdownHandBacks {
  /** By server name: the scope whose countdowns may still carry the replica's id. */
  private readonly owed = new Map<string, Scope>();
  private running: Promise<void> | undefined;

  constructor(
    private readonly store: OperatorStore,
    private readonly owner: string,
    private readonly log: Log,
  ) {}

  /** The server was let go: its countdowns are handed back once its follower has stopped. */
  owe(name: string, scope: Scope): void {
    this.owed.set(name, scope);
  }

  /** Followed again: its new follower adopts what the old one held (the same owner id), nothing to hand back. */
  forget(name: string): void {
    this.owed.delete(name);
  }

  /**
   * Hands back, in one statement, those owed whose follower is no longer `busy` (still following or stopping); one
   * hand-back at a time, what failed tried again at the next call. Undefined when nothing was started.
   */
  handBack(busy: (name: string) => boolean): Promise<void> | undefined {
    if (this.running) return undefined;
    const due = [...this.owed].filter(([name]) => !busy(name));
    if (due.length === 0) return undefined;
    this.running = (async () => {
      try {
        await this.store.change(
          releaseLeases(
            this.owner,
            due.map(([, scope]) => scope),
          ),
        );
        // One followed again meanwhile is its new follower's to adopt, not to hand back.
        for (const [name, scope] of due) if (this.owed.get(name) === scope) this.owed.delete(name);
      } catch (error) {
        this.log("warn", `could not hand countdowns back (tried again next round): ${describeDatabaseFailure(error)}`);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }
}
