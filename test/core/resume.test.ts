import { describe, expect, it } from "vitest";
import { classifyArmedCountdown } from "../../src/core/resume.js";

describe("misfire policy", () => {
  const countdown = { armedAt: 1_000, deadlineAt: 3_000 };
  it("re-arms a future deadline for the time left", () => {
    expect(classifyArmedCountdown(countdown, 2_500, 60_000)).toEqual({ action: "rearm", remainingMs: 500 });
  });
  it("fires a countdown late by less than the window", () => {
    expect(classifyArmedCountdown(countdown, 62_999, 60_000)).toEqual({ action: "fire", lateMs: 59_999 });
  });
  it("expires one late by the window or more", () => {
    expect(classifyArmedCountdown(countdown, 63_000, 60_000)).toEqual({ action: "expire", lateMs: 60_000 });
  });
  it("never waits longer than the countdown's duration when the clock went back", () => {
    expect(classifyArmedCountdown(countdown, -3_600_000, 60_000)).toEqual({ action: "rearm", remainingMs: 2_000 });
  });
});
