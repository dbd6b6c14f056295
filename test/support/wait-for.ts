// The one way a test waits for a state: it looks, and looks again, until a probe answers or its patience runs out,
// and then fails naming what it waited for. A test waits for the row or event that closes a decision; it never sleeps
// and then asserts that nothing happened.

// The timers of the machine, taken before any test fakes them: a wait by the clock stays a real wait.
const realSetTimeout = globalThis.setTimeout;
const realSetImmediate = globalThis.setImmediate;
const realNow = Date.now;

export interface Patience {
  /** How long to wait, in real milliseconds (20 s by default). */
  timeoutMs?: number;
  /**
   * How many times to look again instead, for a wait that the clock does not measure (fake timers, turns of the
   * event loop): the probe is asked once, then once after each of `steps` intervals.
   */
  steps?: number;
  /**
   * Between two looks: a pause of this many milliseconds (50 by default), or a step of the test's own (fake time
   * moved on, a turn of the event loop).
   */
  interval?: number | (() => Promise<unknown>);
  /** What the failure adds after naming the wait (a log's tail, the screen). */
  report?: () => string;
}

/** The value waited for, or undefined, null or false for "not yet". */
export type Probe<T> = () => T | undefined | null | false | Promise<T | undefined | null | false>;

/**
 * Resolves with the first value `probe` answers; rejects, naming `what` (a string, or what a function says at that
 * moment: the state seen last), once its patience has run out. A probe that throws ends the wait with its error.
 */
export async function waitFor<T>(what: string | (() => string), probe: Probe<T>, patience: Patience = {}): Promise<T> {
  const { timeoutMs = 20_000, steps, interval = 50 } = patience;
  const pause = typeof interval === "number" ? () => sleep(interval) : interval;
  const started = realNow();
  for (let step = 0; ; step++) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    const spent = steps === undefined ? realNow() - started > timeoutMs : step >= steps;
    if (spent) {
      const waited = steps === undefined ? `${timeoutMs} ms` : `${steps} steps`;
      const name = typeof what === "string" ? what : what();
      const report = patience.report?.();
      throw new Error(`timed out after ${waited} waiting for ${name}${report ? `\n${report}` : ""}`);
    }
    await pause();
  }
}

/** A pause of real time, whatever timers the test faked. Not a way to wait for a state: `waitFor` is. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => realSetTimeout(resolve, ms));
}

/** A turn of the event loop: every job that could run meanwhile (a promise's continuation, an I/O callback) has run. */
export function turn(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}

/** Turns of the event loop until `done` holds (at most `steps`), for what runs without waiting for time. */
export function afterTurns(done: () => boolean, steps = 50): Promise<true> {
  return waitFor(`${done}`, () => done(), { steps, interval: turn });
}
