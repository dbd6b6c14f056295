// When the database stops working under a running enforcer (read-only, disk full, locked for longer than the busy
// timeout, damaged, deleted), the host must not notice beyond one clear log line: the enforcer pauses itself, says
// why once, probes the store every few seconds, and says so again when it works and it resumes.
import { describeDatabaseFailure, NETWORK_CAUSE } from "../store/open/failure.js";
import type { EngineStore, StoreProblem } from "../store/port.js";
import { systemClock, type Clock } from "./clock.js";
import type { EngineEvents } from "./engine-events.js";
import type { TimerQueue } from "./timer-queue.js";

const DESCRIPTIONS: Record<StoreProblem, string> = {
  "read-only": "is read-only",
  full: "cannot grow (the disk is full)",
  locked: "is locked by another process for longer than the busy timeout",
  damaged: "is damaged",
  gone: "was deleted or replaced while this process had it open",
  unavailable: "cannot be read or written",
};

export interface StoreState {
  kind: StoreProblem;
  /** On the monotonic clock: a pause is measured in elapsed time, whatever the wall clock does meanwhile. */
  since: number;
  failures: number;
}

/** Who is told that the store stopped working and that it works again (store-pause.ts; wired by the root). */
export interface StoreHealthListener {
  paused(report: EngineEvents["store_paused"]): void;
  resumed(report: EngineEvents["store_resumed"]): void;
}

export class StoreHealth {
  private problem: StoreState | undefined;

  constructor(
    private readonly store: EngineStore,
    private readonly timers: TimerQueue,
    private readonly listener: StoreHealthListener,
    private readonly probeIntervalMs: number,
    private readonly clock: Clock = systemClock,
  ) {}

  get healthy(): boolean {
    return this.problem === undefined;
  }

  get state(): StoreState | undefined {
    return this.problem ? { ...this.problem } : undefined;
  }

  /** True when `error` was the store failing (reported once, and the enforcer pauses); false for anything else. */
  report(error: unknown): boolean {
    const kind = this.store.problemOf(error);
    if (!kind) return false;
    this.fail(kind, error);
    return true;
  }

  private fail(kind: StoreProblem, error: unknown): void {
    const current = this.problem;
    // A file gone for good outranks a passing problem (locked, full): say so, and stop probing the old file.
    if (current && !(kind === "gone" && current.kind !== "gone")) {
      current.failures++;
      return;
    }
    if (current) this.timers.cancel("store-probe");
    this.problem = {
      kind,
      since: current?.since ?? this.clock.monotonic(),
      failures: (current?.failures ?? 0) + 1,
    };
    const detail = describeDatabaseFailure(error, this.store.location);
    if (kind === "unavailable" && this.store.whyUnreachable && !NETWORK_CAUSE.test(detail)) {
      // The one line must say why; the pause waits for the look at the address (bounded), writes failing meanwhile.
      void this.store.whyUnreachable().then(
        (seen) => this.announce(kind, seen ? describeDatabaseFailure(error, this.store.location, seen) : detail),
        () => this.announce(kind, detail),
      );
      return;
    }
    this.announce(kind, detail);
  }

  /** Says why the enforcer pauses (once), unless the problem was lifted or outranked meanwhile. */
  private announce(kind: StoreProblem, detail: string): void {
    if (this.problem?.kind !== kind) return;
    const retry =
      kind === "gone"
        ? "restart OpenCode (or the service) to start a new file"
        : `it is tried again every ${Number((this.probeIntervalMs / 1000).toFixed(1))} s`;
    const message = `todo-continuation paused: the database ${this.store.location} ${DESCRIPTIONS[kind]}: ${detail}. OpenCode is not affected; ${retry}.`;
    this.listener.paused({ problem: kind, message });
    if (kind !== "gone") this.scheduleProbe();
  }

  private scheduleProbe(): void {
    this.timers.schedule("store-probe", this.probeIntervalMs, () => void this.probe());
  }

  private async probe(): Promise<void> {
    if (!this.problem) return;
    try {
      await this.store.probe();
    } catch (error) {
      // A file deleted or replaced meanwhile outranks the problem being probed: say so, and stop probing.
      if (this.store.problemOf(error) === "gone") this.fail("gone", error);
      else this.scheduleProbe();
      return;
    }
    const { kind, since, failures } = this.problem;
    this.problem = undefined;
    this.listener.resumed({
      problem: kind,
      pausedForMs: Math.round(this.clock.monotonic() - since),
      failedWrites: failures,
    });
  }
}
