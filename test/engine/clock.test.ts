// systemClock promises: now() is the wall time (Date.now(), what gets stored), monotonic() is the time waits are measured
// with (performance.now(), which a wall-clock jump does not move), and both read the global clock objects at each call,
// not once at import, so that fake timers installed after the module was loaded replace them. The whole engine under a
// jumping clock is test/engine/scenarios/clock-jumps.test.ts.
import { afterEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "../../src/engine/clock.js";

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe("on the real clocks", () => {
  it("now() is the wall time of the moment it is called", () => {
    const before = Date.now();
    const now = systemClock.now();
    const after = Date.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(after);
  });

  it("monotonic() is performance.now() of the moment it is called, and never goes back", () => {
    const before = performance.now();
    const readings = Array.from({ length: 1000 }, () => systemClock.monotonic());
    const after = performance.now();
    expect(readings[0]).toBeGreaterThanOrEqual(before);
    expect(readings.at(-1)).toBeLessThanOrEqual(after);
    for (let i = 1; i < readings.length; i++) expect(readings[i]).toBeGreaterThanOrEqual(readings[i - 1]!);
  });
});

describe("read at each call (the module was imported before any fake timer existed)", () => {
  it("follows fake timers installed afterwards: a set date, then time advanced", () => {
    vi.useFakeTimers({ toFake: ["Date", "performance"] });
    vi.setSystemTime(new Date("2030-01-01T00:00:00Z"));
    const mono = systemClock.monotonic();
    expect(systemClock.now()).toBe(Date.parse("2030-01-01T00:00:00Z"));
    vi.advanceTimersByTime(1234);
    expect(systemClock.now()).toBe(Date.parse("2030-01-01T00:00:01.234Z"));
    expect(systemClock.monotonic() - mono).toBe(1234);
  });

  it("a wall-clock jump moves now() and leaves monotonic() where it was", () => {
    vi.useFakeTimers({ toFake: ["Date", "performance"] });
    vi.setSystemTime(new Date("2030-01-01T00:00:00Z"));
    const mono = systemClock.monotonic();
    vi.setSystemTime(new Date("2029-12-31T23:00:00Z"));
    expect(systemClock.now()).toBe(Date.parse("2029-12-31T23:00:00Z"));
    expect(systemClock.monotonic()).toBe(mono);
    vi.setSystemTime(new Date("2030-01-01T05:00:00Z"));
    expect(systemClock.monotonic()).toBe(mono);
  });

  it("back on the real clocks once the fake timers are gone", () => {
    vi.useFakeTimers({ toFake: ["Date", "performance"] });
    vi.setSystemTime(new Date("2001-01-01T00:00:00Z"));
    expect(systemClock.now()).toBe(Date.parse("2001-01-01T00:00:00Z"));
    vi.useRealTimers();
    expect(Math.abs(systemClock.now() - Date.now())).toBeLessThan(1000);
    expect(systemClock.now()).toBeGreaterThan(Date.parse("2020-01-01T00:00:00Z"));
  });

  it("a performance object replaced on globalThis is the one monotonic() asks", () => {
    vi.stubGlobal("performance", { now: () => 42.5 });
    expect(systemClock.monotonic()).toBe(42.5);
    vi.stubGlobal("performance", { now: () => 7 });
    expect(systemClock.monotonic()).toBe(7);
  });
});
