/** Wall time is what gets stored (deadlines survive restarts); monotonic time is what waits are measured with. */
export interface Clock {
  now(): number;
  monotonic(): number;
}

// Looked up at each call (not imported once) so that test fake timers can replace the global clock objects.
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => globalThis.performance.now(),
};
