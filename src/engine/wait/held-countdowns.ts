// What this process holds of its countdowns in memory: the armed countdown of each session, and the sessions whose
// arming is being written with the activity that came meanwhile. The hot path asks it for every streamed part, so its
// count is kept at each change rather than summed at each question (under Bun, summing two map sizes for every part
// was about 7% of the hot path's cost). Only Countdowns (countdowns.ts) changes it, keeping the rows and timers in
// step.
import type { CancelReason, ResumeReason } from "../../core/reasons.js";
import type { TodoSummary } from "../../core/todos.js";
import type { CountdownRow } from "../../store/schema.js";

/** A countdown this process holds and waits for (wait/countdowns.ts owns it). */
export interface Armed {
  readonly row: CountdownRow;
  readonly summary?: TodoSummary;
  /** When it is due, on the monotonic clock. */
  readonly dueMono: number;
  /** How it came to this process when it was picked up after a restart, from another owner or after an outage. */
  readonly resumed: ResumeReason | null;
}

/** Activity that came while a countdown's arming was being written: it ends the countdown once written. */
export interface Cancellation {
  reason: CancelReason;
  detail: Record<string, unknown>;
}

export class HeldCountdowns {
  private readonly bySession = new Map<string, Armed>();
  private readonly arming = new Map<string, Cancellation | null>();
  private count = 0;

  /** Sessions with a countdown here, armed or being armed. */
  get size(): number {
    return this.count;
  }

  /** Whether anything counts down for this session here (armed, or being armed). */
  has(sessionId: string): boolean {
    return this.bySession.has(sessionId) || this.arming.has(sessionId);
  }

  armedFor(sessionId: string): Armed | undefined {
    return this.bySession.get(sessionId);
  }

  sessions(): string[] {
    return [...this.bySession.keys()];
  }

  hold(armed: Armed): void {
    this.bySession.set(armed.row.sessionId, armed);
    this.recount();
  }

  /** Lets go of the session's armed countdown; returns it, if there was one. */
  release(sessionId: string): Armed | undefined {
    const armed = this.bySession.get(sessionId);
    if (!armed) return undefined;
    this.bySession.delete(sessionId);
    this.recount();
    return armed;
  }

  /** The session's arming is being written. */
  startArming(sessionId: string): void {
    this.arming.set(sessionId, null);
    this.recount();
  }

  /** Activity came during the session's arming: the first one is kept; nothing when no arming is being written. */
  cancelArming(sessionId: string, cancellation: Cancellation): void {
    if (this.arming.get(sessionId) === null) this.arming.set(sessionId, cancellation);
  }

  /** What came while the session's arming was written, if anything. */
  cancelledWhileArming(sessionId: string): Cancellation | null | undefined {
    return this.arming.get(sessionId);
  }

  endArming(sessionId: string): void {
    this.arming.delete(sessionId);
    this.recount();
  }

  /** Forgets every arming under way (the store paused: their rows are adopted with the others). */
  dropArmings(): void {
    this.arming.clear();
    this.recount();
  }

  private recount(): void {
    this.count = this.bySession.size + this.arming.size;
  }
}
