// The figures in the docs are the last `npm run bench`'s: docs/performance.md's table and README's summary line are
// what bench-results/latest.json renders to (`npm run docs:figures` writes them; this fails until it has).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { betweenMarkers } from "../../scripts/markers.js";
import { readLatest, rendered, ROOT, TARGETS } from "../../scripts/render-figures.js";

describe("the figures in the docs", () => {
  const expected = rendered(readLatest());

  for (const key of Object.keys(TARGETS) as (keyof typeof TARGETS)[]) {
    const { file, markers } = TARGETS[key];
    it(`${file} holds what bench-results/latest.json renders to`, () => {
      const committed = betweenMarkers(readFileSync(join(ROOT, file), "utf8"), markers);
      expect(committed, `${file} has its ${markers}:start … end markers`).toBeDefined();
      expect(committed, `${file} is stale: run npm run docs:figures`).toBe(expected[key]);
    });
  }

  it("every figure of latest.json is in the table, with its target", () => {
    const { figures } = readLatest();
    for (const f of figures) {
      expect(expected.table).toContain(`${f.group} · ${f.name}`);
      if (f.target) expect(expected.table).toContain(f.target);
    }
  });
});
