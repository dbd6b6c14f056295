// Everything that flows back through the engine, and what it reports besides its decisions (which are audit rows): one
// closed list of events with typed payloads. A part that must hand something to a part built after it emits one of
// these; the composition root (enforcer.ts) says who listens. A listener that throws is ignored: reporting must never
// be what breaks the engine or its host.
import type { ResumeReason } from "../core/reasons.js";
import type { TodoSummary } from "../core/todos.js";
import type { LogLevel } from "../host/port.js";
import type { StoreProblem } from "../store/port.js";
import type { CountdownRow } from "../store/schema.js";
import { describeDatabaseFailure } from "../store/failure.js";

/** A countdown this process holds and waits for (wait/countdowns.ts owns it). */
export interface Armed {
  readonly row: CountdownRow;
  readonly summary?: TodoSummary;
  /** When it is due, on the monotonic clock. */
  readonly dueMono: number;
  /** How it came to this process when it was picked up after a restart, from another owner or after an outage. */
  readonly resumed: ResumeReason | null;
}

/** What is known of a countdown when it comes due. */
export interface DueInfo {
  /** How late it fires relative to its stored deadline (0 for one this process armed and waited for). */
  lateMs: number;
  resumed: ResumeReason | null;
}

export interface EngineEvents {
  /** A countdown was armed here and is waited for (the toasts show it). */
  countdown_armed: { armed: Armed };
  /** A countdown reached its deadline (the injector takes it from here). */
  countdown_due: { armed: Armed; info: DueInfo };
  /** OpenCode said the session went idle (the plugin tells its news at the first one). */
  session_idle: { sessionId: string };
  /** The session is to be looked at as if it had gone idle (an idle came while its continuation was in flight). */
  look_again: { sessionId: string };
  /**
   * Something failed at a boundary (an event handler, a timer, a lane, a background job, a prompt call): the store's
   * own failure pauses the engine (`store_paused`), anything else is reported as an `error`.
   */
  failure: { operation: string; error: unknown };
  /** A failure that was not the store's. */
  error: { operation: string; error: unknown };
  /** The database stopped working: decisions pause until it works again. */
  store_paused: { problem: StoreProblem; message: string };
  /** The database works again; countdowns are adopted again. */
  store_resumed: { problem: StoreProblem; pausedForMs: number; failedWrites: number };
}

export type EngineEventName = keyof EngineEvents;
type Listener<E extends EngineEventName> = (payload: EngineEvents[E]) => void;

export class EngineEmitter {
  private readonly listeners = new Map<EngineEventName, Set<Listener<never>>>();

  /** Subscribes; returns the function that unsubscribes. */
  on<E extends EngineEventName>(event: E, listener: Listener<E>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener as Listener<never>);
    return () => set.delete(listener as Listener<never>);
  }

  emit<E extends EngineEventName>(event: E, payload: EngineEvents[E]): void {
    for (const listener of this.listeners.get(event) ?? []) {
      try {
        (listener as Listener<E>)(payload);
      } catch {
        // See the file comment.
      }
    }
  }
}

/** Everything the engine reports also goes to OpenCode's log: one line per event, the database's location in it. */
export function logEngineEvents(
  events: EngineEmitter,
  log: (level: LogLevel, message: string, extra?: Record<string, unknown>) => void,
  location: string,
): void {
  events.on("error", ({ operation, error }) =>
    log("error", `${operation} failed`, { error: describeDatabaseFailure(error) }),
  );
  events.on("store_paused", ({ problem, message }) => log("error", message, { kind: problem }));
  events.on("store_resumed", ({ problem, pausedForMs, failedWrites }) =>
    log(
      "info",
      `todo-continuation resumed: the database ${location} works again after ${Math.round(pausedForMs / 1000)} s (${failedWrites} failed write(s) while ${problem}).`,
    ),
  );
}
