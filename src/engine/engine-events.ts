// What the enforcer reports besides its decisions (which are audit rows): a closed list of events with typed payloads.
// A listener that throws is ignored: reporting must never be what breaks the engine or its host.
import type { LogLevel } from "../host/port.js";
import type { StoreProblem } from "../store/port.js";
import { errorMessage } from "./host-calls.js";

export interface EngineEvents {
  /** Something failed at a boundary (an event handler, a timer, a background evaluation, a prompt job). */
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
  events.on("error", ({ operation, error }) => log("error", `${operation} failed`, { error: errorMessage(error) }));
  events.on("store_paused", ({ problem, message }) => log("error", message, { kind: problem }));
  events.on("store_resumed", ({ problem, pausedForMs, failedWrites }) =>
    log(
      "info",
      `todo-continuation resumed: the database ${location} works again after ${Math.round(pausedForMs / 1000)} s (${failedWrites} failed write(s) while ${problem}).`,
    ),
  );
}
