// Engine tests run on fake timers (setTimeout, setInterval, Date, performance) from a fixed date: waits, deadlines,
// leases and clock jumps are then exact and instant.
import { afterEach, beforeEach, vi } from "vitest";
import type { EngineFixture } from "./engine-fixture.js";

export const START = new Date("2026-11-21T12:00:00Z");

export const advance = (ms: number) => vi.advanceTimersByTimeAsync(ms);

/** Fake timers for every test of the file; `current()` is disposed after each test, before the real timers return. */
export function useFakeTime(current: () => EngineFixture | undefined = () => undefined): void {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"] });
    vi.setSystemTime(START);
  });
  afterEach(async () => {
    await current()?.destroy();
    vi.useRealTimers();
  });
}

/** Lets every timer due now run, then waits for the engine's evaluations and prompt calls to finish. */
export async function settle(f: EngineFixture): Promise<void> {
  await advance(0);
  await f.enforcer.settled();
}
