// What every part of the engine shares: the configuration, the clock, the store and OpenCode, the one timer queue,
// the session lanes and memories, the lifecycle, and the three ways to report (log, a failure, a background job).
import type { Config } from "../config.js";
import type { HostPort, LogLevel } from "../host/port.js";
import type { EngineStore, Scope, SessionChange, SessionScope } from "../store/port.js";
import type { Clock } from "./clock.js";
import type { Lifecycle } from "./lifecycle.js";
import type { SessionLanes } from "./session-lanes.js";
import type { SessionMemories } from "./session-memory.js";
import type { TimerQueue } from "./timer-queue.js";

export interface EngineContext {
  readonly config: Config;
  /** What this engine follows: the OpenCode instance directory its sessions belong to, on its server. */
  readonly followed: Scope;
  /** Who owns the countdowns this process arms (see owner.ts). */
  readonly owner: string;
  readonly clock: Clock;
  readonly store: EngineStore;
  readonly host: HostPort;
  readonly timers: TimerQueue;
  readonly lanes: SessionLanes;
  readonly memories: SessionMemories;
  readonly lifecycle: Lifecycle;
  scope(sessionId: string): SessionScope;
  /** A session change (taken at the time of the call) written in the session's lane. */
  changeSession(sessionId: string, change: SessionChange): Promise<unknown>;
  log(level: LogLevel, message: string, extra?: Record<string, unknown>): void;
  /** A failure at a boundary: the store's own failures pause the engine, the rest is reported and logged. */
  failed(operation: string, error: unknown): void;
  /** Keeps a background job in view: its failure is reported and `dispose()` waits for it. */
  track<T>(job: Promise<T>): Promise<T | undefined>;
}
