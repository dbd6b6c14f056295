// Engine tests run on fake timers (setTimeout, setInterval, Date, performance) from a fixed date: waits, deadlines,
// leases and clock jumps are then exact and instant.
import { afterEach, beforeEach, vi } from "vitest";
import { liveFixtures, type EngineFixture } from "./engine-fixture.js";
import { waitFor } from "./wait-for.js";

export const START = new Date("2026-11-21T12:00:00Z");

interface FakeClock {
  now: number;
  timers?: Record<string, { callAt: number }>;
}

/** The fake clock behind the faked setTimeout (@sinonjs/fake-timers hangs it there). */
function fakeClock(): FakeClock | undefined {
  return (globalThis.setTimeout as unknown as { clock?: FakeClock }).clock;
}

/**
 * Moves the fake clock by `ms`. On SQLite a state change completes within the timer callback that caused it; on
 * PostgreSQL it waits for the network, which fake time does not move. So there the clock stops at each timer due on
 * the way and the engine settles (its store calls answered) before the next one runs, as a synchronous store would.
 */
export async function advance(ms: number): Promise<typeof vi> {
  const clock = fakeClock();
  const onPostgres = [...liveFixtures].some((f) => f.backend === "postgres");
  if (!onPostgres || !clock) return vi.advanceTimersByTimeAsync(ms);
  const target = clock.now + ms;
  for (;;) {
    for (const f of liveFixtures) await f.quiet();
    const next = Math.min(...Object.values(clock.timers ?? {}).map((t) => t.callAt));
    if (next <= target) await vi.advanceTimersByTimeAsync(Math.max(0, next - clock.now));
    else if (clock.now < target) await vi.advanceTimersByTimeAsync(target - clock.now);
    else return vi;
  }
}

/**
 * Steps of fake time that move no clock (`advance(0)`), at most 100, until `done` holds: an attempt's chain of reads
 * and writes, with no time passing.
 */
export function until(done: () => boolean): Promise<true> {
  return waitFor(`${done}`, () => done(), { steps: 100, interval: () => advance(0) });
}

/** Fake timers (setTimeout, setInterval, Date, performance) from START: waits, deadlines and leases exact and instant. */
export function startFakeTime(): void {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"] });
  vi.setSystemTime(START);
}

/**
 * Fake timers for every test of the file; the engines `current()` gives (one, or several: `() => list.splice(0)`) are
 * destroyed after each test, before the real timers return.
 */
export function useFakeTime(
  current: () => EngineFixture | readonly EngineFixture[] | undefined = () => undefined,
): void {
  beforeEach(startFakeTime);
  afterEach(async () => {
    for (const fixture of [current() ?? []].flat()) await fixture.destroy();
    vi.useRealTimers();
  });
}

/** Lets every timer due now run, then waits for the engine's evaluations and prompt calls to finish. */
export async function settle(f: EngineFixture): Promise<void> {
  await advance(0);
  await f.enforcer.settled();
}
