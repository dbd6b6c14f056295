// The reasons' tables of docs/how-it-decides.md are made from the code's (core/skip-reasons.ts, core/cancel-reasons.ts,
// by `npm run docs:reasons`): a row edited by hand, or a reason changed in the code without the page written again,
// fails here. The options a guard's row names are options of the configuration.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ENFORCER_KEYS } from "../../src/config/options.js";
import { SKIP_REASONS } from "../../src/core/reasons.js";
import { SKIP_FACTS } from "../../src/core/skip-reasons.js";
import { betweenMarkers } from "../../scripts/markers.js";
import { cancelTable, guardTable } from "../../scripts/reason-tables.js";

const PAGE = readFileSync(join(resolve(import.meta.dirname, "..", ".."), "docs", "how-it-decides.md"), "utf8");

describe("the reasons' tables of docs/how-it-decides.md", () => {
  it("the guard table is generated from the skip reasons (npm run docs:reasons)", () => {
    expect(betweenMarkers(PAGE, "guards")).toBe(guardTable());
  });

  it("the countdowns' table is generated from the cancel reasons (npm run docs:reasons)", () => {
    expect(betweenMarkers(PAGE, "cancel-reasons")).toBe(cancelTable());
  });

  it("every option a guard's row names is an option of the configuration", () => {
    const named = SKIP_REASONS.flatMap((reason) => SKIP_FACTS[reason].options.map((option) => [reason, option]));
    expect(named.length).toBeGreaterThan(0);
    for (const [reason, option] of named) expect(ENFORCER_KEYS, `${reason} names ${option}`).toContain(option);
  });
});
