// The capacity page's figures are the fleet benchmark's: docs/capacity.md's tables and docs/fleet-scaling.svg are what
// bench-results/fleet.json renders to (`npm run docs:fleet` writes them; this fails until it has).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { betweenMarkers } from "../../scripts/markers.js";
import { CAPACITY, PICTURE, readFleet, renderedFleet } from "../../scripts/render-fleet.js";
import { ROOT } from "../../scripts/render-figures.js";

describe("the fleet's figures in the docs", () => {
  const results = readFleet();
  const { blocks, svg } = renderedFleet(results);

  for (const [markers, body] of Object.entries(blocks))
    it(`${CAPACITY} holds what bench-results/fleet.json renders to between its ${markers} markers`, () => {
      const committed = betweenMarkers(readFileSync(join(ROOT, CAPACITY), "utf8"), markers);
      expect(committed, `${CAPACITY} has its ${markers}:start … end markers`).toBeDefined();
      expect(committed, `${CAPACITY} is stale: run npm run docs:fleet`).toBe(body);
    });

  it(`${PICTURE} is what bench-results/fleet.json draws`, () => {
    expect(readFileSync(join(ROOT, PICTURE), "utf8"), `${PICTURE} is stale: run npm run docs:fleet`).toBe(svg);
  });

  it("every size in the results lost nothing and doubled nothing", () => {
    expect(results.sizes.length).toBeGreaterThan(0);
    for (const size of results.sizes)
      expect(size.verdict, JSON.stringify(size.size)).toMatchObject({ lost: 0, doubled: 0 });
  });
});
