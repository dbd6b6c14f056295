// The reasons' tables of docs/how-it-decides.md are made from the code's (core/skip-reasons.ts, core/cancel-reasons.ts,
// by `npm run docs:reasons`): a row edited by hand, or a reason changed in the code without the page written again,
// fails here. The options a guard's row names are options of the configuration, and the notice kinds' table of
// docs/notifications.md names for each kind the reasons whose notice it is.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ENFORCER_KEYS } from "../../src/config/options.js";
import { NOTICE_KINDS, SKIP_REASONS } from "../../src/core/reasons.js";
import { SKIP_FACTS } from "../../src/core/skip-reasons.js";
import { betweenMarkers } from "../../scripts/markers.js";
import { cancelTable, guardTable } from "../../scripts/reason-tables.js";

const DOCS = join(resolve(import.meta.dirname, "..", ".."), "docs");
const PAGE = readFileSync(join(DOCS, "how-it-decides.md"), "utf8");
const codes = (cell: string) => [...cell.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);

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

  it("the notice kinds' table of docs/notifications.md names each kind's reasons as the skip reasons' table does", () => {
    const page = readFileSync(join(DOCS, "notifications.md"), "utf8");
    const rows = page.split("\n").filter((line) => /^\| `[a-z]+` \|/.test(line));
    const documented = Object.fromEntries(
      rows.map((line) => line.split(" | ")).map((c) => [codes(c[0]!)[0], codes(c[2]!)]),
    );
    for (const kind of NOTICE_KINDS) {
      const inCode = SKIP_REASONS.filter((reason) => SKIP_FACTS[reason].notice === kind);
      expect(documented[kind]?.sort(), `docs/notifications.md, kind ${kind}`).toEqual(inCode.sort());
    }
  });
});
