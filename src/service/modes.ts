// A closed set of named modes, changed only through `enter()`, which refuses a change its owner's table does not allow:
// an impossible change is a programming error, and it throws where it happens instead of leaving a flag half set for
// someone to find later. The engine's own lifecycle (engine/lifecycle.ts) follows the same rule.

/** For each mode, the modes it may go to. */
export type ModeTable<M extends string> = { readonly [From in M]: readonly M[] };

export class ModeError extends Error {
  constructor(what: string, from: string, to: string) {
    super(`${what} cannot go from ${from} to ${to}`);
    this.name = "ModeError";
  }
}

export class Modes<M extends string> {
  private current: M;

  /** `what` names the owner in the error, e.g. "the fleet replica host/1/ab". */
  constructor(
    protected readonly what: string,
    private readonly allowed: ModeTable<M>,
    first: M,
  ) {
    this.current = first;
  }

  get mode(): M {
    return this.current;
  }

  enter(next: M): void {
    if (!this.allowed[this.current].includes(next)) throw new ModeError(this.what, this.current, next);
    this.current = next;
  }

  is(...modes: readonly M[]): boolean {
    return modes.includes(this.current);
  }
}

/** The modes every service goes through, whatever it does while it runs. */
export type StartStopMode = "idle" | "starting" | "stopping" | "stopped";

/**
 * The modes of something started once and stopped once, whoever asks and when: every start() is the same start, every
 * stop() the same stop, which resolves once it is stopped; a stop asked during the start runs once the start is over
 * (the start sees `stopAsked` and begins nothing more); a start asked once stopping is refused.
 */
export class ServiceModes<M extends string> extends Modes<M | StartStopMode> {
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(what: string, allowed: ModeTable<M | StartStopMode>) {
    super(what, allowed, "idle");
  }

  get stopAsked(): boolean {
    return this.is("stopping", "stopped");
  }

  /** Enters `starting` and runs `work`, the first time; the same start every time after. */
  start(work: () => Promise<void>): Promise<void> {
    if (this.stopAsked) return Promise.reject(new Error(`${this.what} was stopped: it cannot start again`));
    if (!this.starting) {
      this.enter("starting");
      this.starting = work();
    }
    return this.starting;
  }

  /** Enters `stopping`, waits for a start under way, runs `work`, enters `stopped`; the same stop every time after. */
  stop(work: () => Promise<void>): Promise<void> {
    this.stopping ??= this.halt(work);
    return this.stopping;
  }

  private async halt(work: () => Promise<void>): Promise<void> {
    this.enter("stopping");
    await this.starting?.catch(() => undefined);
    try {
      await work();
    } finally {
      // Nothing more runs either way; a stop that failed says why to every caller of stop().
      this.enter("stopped");
    }
  }
}
