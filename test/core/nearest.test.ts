import { describe, expect, it } from "vitest";
import { didYouMean, editDistance, nearest } from "../../src/core/nearest.js";

describe("editDistance", () => {
  it.each([
    ["", "", 0],
    ["abc", "abc", 0],
    ["abc", "abd", 1],
    ["abc", "ab", 1],
    ["ab", "ba", 1],
    ["kitten", "sitting", 3],
  ])("%s → %s: %i", (a, b, n) => expect(editDistance(a, b)).toBe(n));
});

describe("nearest", () => {
  const options = ["countdownSeconds", "maxContinuations", "stagnationLimit", "enabled"];
  it("finds the option a slip or a different unit meant", () => {
    expect(nearest("countdownSecs", options)).toBe("countdownSeconds");
    expect(nearest("countdownsecond", options)).toBe("countdownSeconds");
    expect(nearest("maxContinuation", options)).toBe("maxContinuations");
    expect(nearest("enable", options)).toBe("enabled");
  });

  it("says nothing for a word unlike any", () => {
    expect(nearest("colour", options)).toBeUndefined();
    expect(didYouMean("colour", options)).toBe("");
  });

  it("takes the closest of several near ones", () => {
    expect(nearest("stagnaton", ["stagnation", "station"])).toBe("stagnation");
    expect(didYouMean("stagnaton", ["stagnation"])).toBe(" (did you mean stagnation?)");
  });
});
