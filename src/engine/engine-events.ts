// What the engine reports besides its decisions (which are audit rows): one closed list of events with typed payloads,
// for whoever watches it (the plugin's news, the service's metrics, OpenCode's log). Nothing the engine does next
// travels here: the control path is typed calls wired by the composition root (parts.ts, enforcer.ts). A listener that
// throws never breaks the engine or its host, and is reported to the emitter's owner rather than swallowed.
import type { ParkReason } from "../core/reasons.js";
import type { LogLevel } from "../host/port.js";
import type { StoreProblem } from "../store/port.js";
import { describeDatabaseFailure } from "../store/open/failure.js";

export interface EngineEvents {
  /** OpenCode said the session went idle (the plugin tells its news at the first one). */
  session_idle: { sessionId: string };
  /** A session was parked (docs/waiting.md): the TUI's toast says why and until when. */
  session_parked: { sessionId: string; reason: ParkReason; until: number };
  /**
   * Something failed at a boundary (an event handler, a timer, a lane, a background job, a prompt call) that was not
   * the store's own failure (which pauses the engine: `store_paused`).
   */
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

  constructor(
    /** Told when a listener throws: the emitter goes on with the next listener, and the throw is not lost. */
    private readonly listenerFailed: (event: EngineEventName, error: unknown) => void,
  ) {}

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
      } catch (error) {
        this.reportListenerFailure(event, error);
      }
    }
  }

  /** Never throws: a report about a report that fails has nowhere further to go. */
  private reportListenerFailure(event: EngineEventName, error: unknown): void {
    try {
      this.listenerFailed(event, error);
    } catch {
      // See above.
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
