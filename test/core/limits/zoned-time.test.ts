import { describe, expect, it } from "vitest";
import { instantOf, isTimeZone, nextTimeOfDay, wallTimeAt } from "../../../src/core/limits/zoned-time.js";

describe("wall-clock times in a named zone", () => {
  it("reads what a zone's clocks show, and back", () => {
    const instant = Date.parse("2026-07-01T12:34:56Z");
    const tokyo = wallTimeAt(instant, "Asia/Tokyo")!;
    expect(tokyo).toEqual({ year: 2026, month: 7, day: 1, hour: 21, minute: 34, second: 56 });
    expect(instantOf(tokyo, "Asia/Tokyo")).toBe(instant);
    // Summer in New York: UTC−4.
    expect(instantOf({ year: 2026, month: 7, day: 1, hour: 8, minute: 0, second: 0 }, "America/New_York")).toBe(
      Date.parse("2026-07-01T12:00:00Z"),
    );
  });

  it("tomorrow's time crosses a month's and a year's end", () => {
    const now = Date.parse("2026-12-31T23:30:00Z");
    expect(nextTimeOfDay(0, 15, "UTC", now)).toBe(Date.parse("2027-01-01T00:15:00Z"));
    expect(nextTimeOfDay(23, 45, "UTC", now)).toBe(Date.parse("2026-12-31T23:45:00Z"));
  });

  it("an unknown zone answers nothing rather than throwing", () => {
    expect(isTimeZone("Mars/Olympus_Mons")).toBe(false);
    expect(isTimeZone("Europe/Paris")).toBe(true);
    expect(wallTimeAt(0, "Mars/Olympus_Mons")).toBeUndefined();
    expect(nextTimeOfDay(1, 0, "Mars/Olympus_Mons", 0)).toBeUndefined();
  });
});
