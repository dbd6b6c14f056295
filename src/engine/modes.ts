// The one way a part of this program starts, runs and stops: a closed set of named modes, changed only through
// `enter()`, which refuses a change its owner's table does not allow (an impossible change is a programming error, and
// it throws where it happens instead of leaving a flag half set for someone to find later), and a start and a stop that
// are each the same for every caller, whoever asks and when. The enforcer (lifecycle.ts), its background loops (the
// lease loop, the retention schedule, the notice sender) and the services (a standalone service, a fleet replica) each
// hold one, with a table of their own; the root of each stops its parts itself, in a fixed order, and waits for them.

/** For each mode, the modes it may go to. */
export type ModeTable<M extends string> = { readonly [From in M]: readonly M[] };

export class ModeError extends Error {
  constructor(what: string, from: string, to: string) {
    super(`${what} cannot go from ${from} to ${to}`);
    this.name = "ModeError";
  }
}

/** The modes of an owner's table that its start and its stop enter. */
export interface StartStopModes<M extends string> {
  /** Entered by the first start(); none when the owner works from construction on and start() adds to it. */
  readonly starting?: M;
  /** Entered by the first stop(): nothing new begins, what is in flight finishes. */
  readonly stopping: M;
  /** Entered once the stop's work is over (whether it worked or not): for good. */
  readonly stopped: M;
}

export interface ModesOptions<M extends string> extends StartStopModes<M> {
  /** Names the owner in an error, e.g. "the fleet replica host/1/ab". */
  readonly what: string;
  readonly table: ModeTable<M>;
  readonly first: M;
}

/**
 * Every start() is the same start and every stop() the same stop, which resolves once the owner is stopped; a stop
 * asked during the start waits for it (the start may look at `stopAsked` to begin nothing more), then runs; a start
 * asked once a stop was is refused (make a new one).
 */
export class Modes<M extends string, Started = void> {
  private current: M;
  private started: Promise<Started> | undefined;
  private stopped: Promise<void> | undefined;

  constructor(private readonly o: ModesOptions<M>) {
    this.current = o.first;
  }

  get mode(): M {
    return this.current;
  }

  enter(next: M): void {
    if (!this.o.table[this.current].includes(next)) throw new ModeError(this.o.what, this.current, next);
    this.current = next;
  }

  is(...modes: readonly M[]): boolean {
    return modes.includes(this.current);
  }

  /** A stop was asked: it runs, or has run. */
  get stopAsked(): boolean {
    return this.is(this.o.stopping, this.o.stopped);
  }

  /** Enters `starting` and runs `work` (at once, up to its first await), the first time; the same start after. */
  start(work: () => Promise<Started>): Promise<Started> {
    if (this.stopAsked) return Promise.reject(new Error(`${this.o.what} was stopped: it cannot start again`));
    if (this.started) return this.started;
    if (this.o.starting !== undefined) this.enter(this.o.starting);
    this.started = work();
    return this.started;
  }

  /** Enters `stopping`, waits for a start under way, runs `work`, enters `stopped`; the same stop every time after. */
  stop(work: () => Promise<void>): Promise<void> {
    if (!this.stopped) {
      this.enter(this.o.stopping);
      this.stopped = this.halt(work);
    }
    return this.stopped;
  }

  private async halt(work: () => Promise<void>): Promise<void> {
    await this.started?.catch(() => undefined);
    try {
      await work();
    } finally {
      // Nothing more runs either way; a stop that failed says why to every caller of stop().
      this.enter(this.o.stopped);
    }
  }
}

/** The modes every started-and-stopped part goes through besides its own. */
export type StartStopMode = "idle" | "starting" | "stopping" | "stopped";

/**
 * Modes that begin `idle`, enter `starting` at the first start(), and `stopping` then `stopped` at the first stop(),
 * with the modes the table adds between (a service's `connecting`, a fleet replica's `running`).
 */
export function startStopModes<M extends string>(
  what: string,
  table: ModeTable<M | StartStopMode>,
): Modes<M | StartStopMode> {
  return new Modes({ what, table, first: "idle", starting: "starting", stopping: "stopping", stopped: "stopped" });
}

/**
 * The modes of a loop that runs in the background from its start to its stop (the lease loop, the retention schedule,
 * the notice sender): idle ──start()──▶ running ──stop()──▶ stopping ──▶ stopped, and idle ──stop()──▶ stopping (one
 * stopped before it started never starts). Running: it acts on its timer; stopping: no new round, the one in flight
 * finishes; stopped: for good. Its start is over at once, so it has no `starting` of its own.
 */
export type LoopMode = "idle" | "running" | "stopping" | "stopped";

const LOOP_MODES: ModeTable<LoopMode> = {
  idle: ["running", "stopping"],
  running: ["stopping"],
  stopping: ["stopped"],
  stopped: [],
};

export function loopModes(what: string): Modes<LoopMode> {
  return new Modes({
    what,
    table: LOOP_MODES,
    first: "idle",
    starting: "running",
    stopping: "stopping",
    stopped: "stopped",
  });
}
