import { describe, expect, it } from "vitest";
import { readParkRequest } from "../../src/core/park-request.js";

const NOW = Date.UTC(2026, 11, 7, 12, 0, 0);
const read = (args: unknown, maxParkHours = 6) => readParkRequest(args, { now: NOW, maxParkHours });

describe("the model's continue_later call", () => {
  it("minutes from now, fractions allowed", () => {
    expect(read({ reason: "CI is running", minutes: 0.5 })).toEqual({
      ok: true,
      park: { reason: "CI is running", until: NOW + 30_000 },
    });
  });

  it("an ISO 8601 time, with an offset or Z", () => {
    expect(read({ reason: "the deploy window opens", at: "2026-12-07T15:04:00Z" })).toMatchObject({
      ok: true,
      park: { until: Date.parse("2026-12-07T15:04:00Z") },
    });
    expect(read({ reason: "r", at: "2026-12-07T15:04:00+02:00" })).toMatchObject({
      park: { until: Date.parse("2026-12-07T13:04:00Z") },
    });
  });

  it("a check, polled every checkEveryMinutes (1 by default), bounded by the time given", () => {
    expect(read({ reason: "CI", minutes: 30, check: "gh run view 42 --exit-status" })).toEqual({
      ok: true,
      park: {
        reason: "CI",
        until: NOW + 30 * 60_000,
        check: { command: "gh run view 42 --exit-status", everyMs: 60_000 },
      },
    });
    expect(read({ reason: "CI", minutes: 30, check: "true", checkEveryMinutes: 2.5 })).toMatchObject({
      park: { check: { everyMs: 150_000 } },
    });
  });

  it.each([
    [{ minutes: 5 }, "`reason` is required"],
    [{ reason: "  ", minutes: 5 }, "`reason` is required"],
    [{ reason: "x".repeat(501), minutes: 5 }, "`reason` is longer than 500"],
    [{ reason: "r" }, "say when"],
    [{ reason: "r", minutes: 5, at: "2026-12-07T15:04:00Z" }, "not both"],
    [{ reason: "r", minutes: "5" }, "`minutes` must be a number"],
    [{ reason: "r", minutes: Number.NaN }, "`minutes` must be a number"],
    [{ reason: "r", minutes: 0.1 }, "at least 0.25"],
    [{ reason: "r", at: "tomorrow at noon" }, "ISO 8601"],
    [{ reason: "r", at: "2026-12-07" }, "ISO 8601"],
    [{ reason: "r", at: "2026-02-31T10:00:00Z" }, "not a time that exists"],
    [{ reason: "r", at: "2026-12-07T11:00:00Z" }, "in the past"],
    [{ reason: "r", minutes: 7 * 60 }, "more than maxParkHours (6 h)"],
    [{ reason: "r", at: "2026-12-08T12:00:00Z" }, "more than maxParkHours"],
    [{ reason: "r", minutes: 5, checkEveryMinutes: 1 }, "needs a `check`"],
    [{ reason: "r", minutes: 5, check: "" }, "`check` must be a shell command"],
    [{ reason: "r", minutes: 5, check: 42 }, "`check` must be a shell command"],
    [{ reason: "r", minutes: 5, check: "x".repeat(2001) }, "longer than 2000"],
    [{ reason: "r", minutes: 5, check: "true\u0000" }, "NUL"],
    [{ reason: "r", minutes: 5, check: "true", checkEveryMinutes: 0.1 }, "at least 0.25"],
    [null, "must be an object"],
    [["r", 5], "must be an object"],
  ])("refuses %j, saying why", (args, words) => {
    const reading = read(args);
    expect(reading.ok).toBe(false);
    expect(reading.ok ? "" : reading.error).toContain(words);
  });
});
