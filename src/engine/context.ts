// What every part of the engine shares: the configuration, the clock, the store and OpenCode, the one timer queue, the
// session lanes, the lifecycle, the engine's events, and the three ways to report (log, a failure, a background job).
// Parts that share session memory, countdowns or a queue are handed them by the composition root (enforcer.ts).
import type { Config } from "../config/resolve.js";
import type { HostPort, LogLevel } from "../host/port.js";
import { changeSession } from "../store/changes/change-session.js";
import type { LookOwed } from "../store/changes/look-owed.js";
import type { EngineStore, Scope, SessionChange, SessionScope } from "../store/port.js";
import type { Clock } from "./clock.js";
import type { EngineEmitter } from "./engine-events.js";
import type { Lifecycle } from "./lifecycle.js";
import type { SessionLanes } from "./session-lanes.js";
import type { TimerQueue } from "./timer-queue.js";

/** The infrastructure a context is made of. */
export interface ContextParts {
  readonly config: Config;
  /** What this engine follows: the OpenCode instance directory its sessions belong to, on its server. */
  readonly followed: Scope;
  /** Who owns the countdowns this process arms (see store/owner.ts). */
  readonly owner: string;
  readonly clock: Clock;
  readonly store: EngineStore;
  readonly host: HostPort;
  readonly timers: TimerQueue;
  readonly lanes: SessionLanes;
  readonly lifecycle: Lifecycle;
  readonly events: EngineEmitter;
  /**
   * A failure at a boundary (an event handler, a timer, a lane, a background job): the composition root decides what
   * it means (a store's own failure pauses the engine, anything else is reported as an `error` event).
   */
  readonly failed: (operation: string, error: unknown) => void;
}

export interface EngineContext extends ContextParts {
  scope(sessionId: string): SessionScope;
  /** A session change (taken at the time of the call), with what it does to the look owed, written in its lane. */
  changeSession(sessionId: string, change: SessionChange, look?: LookOwed): Promise<unknown>;
  /** A line in OpenCode's log; a log that fails is never what breaks the host. */
  log(level: LogLevel, message: string, extra?: Record<string, unknown>): void;
  /** Keeps a background job in view: its failure is reported and `tracked` holds it until it settles. */
  track<T>(job: Promise<T>): Promise<T | undefined>;
  /** The background jobs not settled yet (shutdown waits for them). */
  readonly tracked: ReadonlySet<Promise<unknown>>;
}

export function createContext(parts: ContextParts): EngineContext {
  const { clock, store, lanes, host, failed } = parts;
  const scope = (sessionId: string): SessionScope => ({ sessionId, ...parts.followed });
  const tracked = new Set<Promise<unknown>>();
  return {
    ...parts,
    scope,
    changeSession: (sessionId, change, look) => {
      const now = clock.now();
      return lanes.post(sessionId, () => store.change(changeSession(scope(sessionId), now, change, look)));
    },
    log: (level, message, extra) => {
      try {
        host.log(level, message, extra);
      } catch {
        // See above.
      }
    },
    track: <T>(job: Promise<T>) => {
      const kept = job.catch((error: unknown) => {
        failed("background job", error);
        return undefined;
      });
      tracked.add(kept);
      void kept.finally(() => tracked.delete(kept));
      return kept;
    },
    tracked,
  };
}
