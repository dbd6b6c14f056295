// docs/how-it-decides.md is where users learn the reason codes they filter on: its tables and the code's typed unions
// must list the same names (the guard table also in the order the guards run; elsewhere order carries no meaning).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GUARD_ORDER } from "../../src/core/decide.js";
import { AUDIT_EVENTS, AUDIT_VOCABULARY, SKIP_REASONS } from "../../src/core/reasons.js";
import { ROOT } from "../crash/processes.js";

const readme = readFileSync(join(ROOT, "docs", "how-it-decides.md"), "utf8");
const codes = (cell: string) => [...cell.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);

function tableAfter(heading: string): string[][] {
  const start = readme.indexOf(heading);
  expect(start, `docs/how-it-decides.md has "${heading}"`).toBeGreaterThanOrEqual(0);
  const lines = readme.slice(start).split("\n");
  const first = lines.findIndex((l) => l.startsWith("|"));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

describe("the audit vocabulary in the docs and in the code", () => {
  it("the guard table lists every skip reason, in the order the guards run", () => {
    const rows = tableAfter("**Guards**, in the order they are checked");
    expect(rows.map((r) => codes(r[1]!)[0])).toEqual([...SKIP_REASONS]);
    expect(GUARD_ORDER).toEqual(SKIP_REASONS);
  });

  it("the vocabulary table lists every event and exactly its reasons", () => {
    const rows = tableAfter("## The audit vocabulary");
    const documented = new Map<string, string[]>();
    for (const [events, reasons] of rows)
      for (const event of codes(events!))
        documented.set(event, reasons!.startsWith("none") ? [] : codes(reasons!.split("(")[0]!));
    expect([...documented.keys()].sort()).toEqual([...AUDIT_EVENTS].sort());
    for (const event of AUDIT_EVENTS) {
      const inCode = AUDIT_VOCABULARY[event].filter((r): r is string => r !== null);
      const inReadme = event === "skipped" ? [...SKIP_REASONS] : documented.get(event)!;
      expect([...inReadme].sort(), `the docs' reasons for ${event}`).toEqual([...inCode].sort());
    }
  });
});
