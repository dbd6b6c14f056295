// What the TUI shows of each session it has drawn: the session's state read from the database (never polled: read
// again on the server's events), the reason the database cannot be read if it cannot, and a UI clock that moves a
// countdown's seconds on without reading again.
import { sessionView, type SessionView } from "../store/queries.js";
import type { OperatorStore } from "../store/operator.js";
import type { PanelRenderer } from "./host-api.js";

/** A refresh right after an event, and one more once the server's decision (after it read OpenCode) is written. */
const REFRESH_DELAYS_MS = [100, 1200];

export function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const line = text.split("\n")[0]!;
  return line.length > 120 ? `${line.slice(0, 120)}…` : line;
}

export class SessionViews {
  readonly views = new Map<string, SessionView>();
  /** Why the database cannot be read or written right now, if it cannot (one line in the panel). */
  problem: string | undefined;
  readonly version: () => number;
  readonly now: () => number;
  private readonly setVersion: (next: number) => void;
  private readonly setNow: (next: number) => void;
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private clock: ReturnType<typeof setInterval> | undefined;
  private disposed = false;

  constructor(
    renderer: PanelRenderer,
    private readonly store: OperatorStore | undefined,
    problem: string | undefined,
  ) {
    this.problem = problem;
    [this.version, this.setVersion] = renderer.signal(0);
    [this.now, this.setNow] = renderer.signal(Date.now());
  }

  /** Something went wrong: the panel says so in one line instead of the session's state. */
  failed(what: string, error: unknown): undefined {
    this.problem = `${what}: ${oneLine(error)}`;
    this.setVersion(this.version() + 1);
    return undefined;
  }

  /** Reads the session's state again now (the panel updates). */
  async refresh(sessionId: string): Promise<void> {
    if (this.disposed || !this.store) return;
    let view: SessionView;
    try {
      view = await sessionView(this.store.reader, sessionId);
    } catch (error) {
      return void this.failed("reading the database", error);
    }
    if (this.disposed) return;
    this.problem = undefined;
    this.views.set(sessionId, view);
    this.setNow(Date.now());
    this.setVersion(this.version() + 1);
    this.keepTime();
  }

  /** Reads every drawn session again shortly (the server decides a few milliseconds after an event). */
  refreshSoon(sessionId: string | undefined): void {
    for (const viewed of this.views.keys()) {
      if (sessionId && sessionId !== viewed) continue;
      for (const delay of REFRESH_DELAYS_MS) {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          void this.refresh(viewed);
        }, delay);
        this.timers.add(timer);
      }
    }
  }

  dispose(): void {
    this.disposed = true;
    for (const timer of this.timers) clearTimeout(timer);
    if (this.clock) clearInterval(this.clock);
  }

  /** The seconds of a countdown move on a UI clock, not by reading the database again. */
  private keepTime(): void {
    const counting = [...this.views.values()].some((v) => v.countdown !== null);
    if (counting && !this.clock) this.clock = setInterval(() => this.setNow(Date.now()), 1000);
    if (!counting && this.clock) {
      clearInterval(this.clock);
      this.clock = undefined;
    }
  }
}
