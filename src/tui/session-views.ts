// What the TUI shows of each session it has drawn: the session's state read from the database (read again on the
// server's events, never polled while nothing moves), the reason the database cannot be read if it cannot, and a UI
// clock that moves a countdown's seconds on without reading again, ticking when the seconds left change.
import { sessionView, type SessionView } from "../store/operator/session-view.js";
import type { PanelRenderer } from "./host-api.js";
import { oneLine, type TuiStore } from "./tui-store.js";

/**
 * Reads after an event: the server decides a few milliseconds after it, or after reading OpenCode (longer on a busy
 * machine); the TUI learns of a countdown only by reading, so it looks a few times.
 */
const REFRESH_DELAYS_MS = [100, 600, 1500, 3000, 6000];
/** A countdown past its deadline is read again at this pace until the server says what became of it. */
const OVERDUE_READ_MS = 1000;

export class SessionViews {
  readonly views = new Map<string, SessionView>();
  /** Why the database cannot be read or written right now, if it cannot (one line in the panel). */
  problem: string | undefined;
  /** What the plugins say about themselves (off, in memory, another enforcer): a line of its own in the panel. */
  notice: string | undefined;
  readonly version: () => number;
  readonly now: () => number;
  /** How many sidebar panels are on screen (OpenCode hides the sidebar at 120 columns or less, or when asked). */
  readonly panels: () => number;
  private readonly setVersion: (next: number) => void;
  private readonly setNow: (next: number) => void;
  private readonly setPanels: (next: number) => void;
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private clock: ReturnType<typeof setTimeout> | undefined;
  private panelCount = 0;
  private disposed = false;

  constructor(
    renderer: PanelRenderer,
    private readonly store: TuiStore | undefined,
    problem: string | undefined,
  ) {
    this.problem = problem;
    [this.version, this.setVersion] = renderer.signal(0);
    [this.now, this.setNow] = renderer.signal(Date.now());
    [this.panels, this.setPanels] = renderer.signal(0);
  }

  /** Something went wrong (or, with undefined, works again): the panel says so in one line. */
  report(problem: string | undefined): void {
    if (problem === this.problem) return;
    this.problem = problem;
    this.setVersion(this.version() + 1);
  }

  announce(notice: string | undefined): void {
    if (notice === this.notice) return;
    this.notice = notice;
    this.setVersion(this.version() + 1);
  }

  failed(what: string, error: unknown): undefined {
    this.report(`${what}: ${oneLine(error)}`);
    return undefined;
  }

  /** Counted apart from the signal: a slot being drawn must not read what it sets (it would draw itself again). */
  panelShown(): void {
    this.setPanels(++this.panelCount);
  }

  panelGone(): void {
    this.panelCount = Math.max(0, this.panelCount - 1);
    this.setPanels(this.panelCount);
  }

  /** Reads the session's state again now (what is drawn of it updates). */
  async refresh(sessionId: string): Promise<void> {
    const store = this.disposed ? undefined : await this.store?.get();
    if (!store || this.disposed) return;
    let view: SessionView;
    try {
      view = await sessionView(store.reader, sessionId);
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

  /** Reads every drawn session (or just `sessionId`) again, a few times over the next seconds. */
  refreshSoon(sessionId: string | undefined, delays: readonly number[] = REFRESH_DELAYS_MS): void {
    for (const viewed of this.views.keys()) {
      if (sessionId && sessionId !== viewed) continue;
      for (const delay of delays) this.later(delay, () => void this.refresh(viewed));
    }
  }

  dispose(): void {
    this.disposed = true;
    for (const timer of this.timers) clearTimeout(timer);
    if (this.clock) clearTimeout(this.clock);
  }

  private later(delayMs: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, delayMs);
    this.timers.add(timer);
  }

  /**
   * The UI clock: it ticks when the seconds left of a countdown change (on its deadline's second boundaries, so the
   * number shown is never a tick behind), and reads again once a deadline has passed; while a check runs, each second.
   */
  private keepTime(): void {
    if (this.clock) clearTimeout(this.clock);
    this.clock = undefined;
    const now = Date.now();
    let next: number | undefined;
    for (const view of this.views.values()) {
      if (view.checking) {
        // A check's seconds go up; its end comes with no event of OpenCode's, so it is read again at each.
        const wait = 1000 - ((now - view.checking.startedAt) % 1000) + 1;
        next = Math.min(next ?? wait, wait);
      }
      if (!view.countdown) continue;
      const left = view.countdown.deadlineAt - now;
      const wait = left > 0 ? (left % 1000 || 1000) + 1 : OVERDUE_READ_MS;
      next = Math.min(next ?? wait, wait);
    }
    if (next === undefined) return;
    this.clock = setTimeout(() => {
      this.clock = undefined;
      const at = Date.now();
      this.setNow(at);
      for (const [sessionId, view] of this.views)
        if ((view.countdown && view.countdown.deadlineAt <= at) || view.checking) void this.refresh(sessionId);
      this.keepTime();
    }, next);
  }
}
