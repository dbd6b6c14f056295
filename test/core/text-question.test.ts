// The text-question detector on labelled tables of real-looking assistant endings: questions, requests without a
// question mark, rhetorical questions, code, URLs, quotations, FAQ headings, courtesy closers, other languages. The
// tables were written independently of the detector; its precision and recall on each are printed and held.
import { describe, expect, it } from "vitest";
import { detectTextQuestion } from "../../src/core/text-question.js";
import { ENDING_CASES, type EndingCase } from "./fixtures/assistant-endings.js";
import { HOLDOUT_CASES } from "./fixtures/assistant-endings-holdout.js";
import { FINAL_CASES } from "./fixtures/assistant-endings-final.js";

interface Score {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  misses: string[];
}

function score(cases: readonly EndingCase[]): Score {
  const s: Score = { tp: 0, fp: 0, fn: 0, tn: 0, misses: [] };
  for (const c of cases) {
    const asks = detectTextQuestion(c.text).asks;
    if (asks && c.asksUser) s.tp++;
    else if (asks) s.fp++;
    else if (c.asksUser) s.fn++;
    else s.tn++;
    if (asks !== c.asksUser) s.misses.push(`${asks ? "false positive" : "missed"}: ${c.name}`);
  }
  return s;
}

const pct = (n: number) => `${(n * 100).toFixed(1)}%`;

describe.each([
  ["tuning table", ENDING_CASES, 0.95, 0.95],
  ["hold-out table", HOLDOUT_CASES, 0.9, 0.9],
  ["final blind table", FINAL_CASES, 0.85, 0.8],
] as const)("detectTextQuestion on the %s", (name, cases, minPrecision, minRecall) => {
  it(`has at least 60 cases, both labels well represented`, () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
    const asking = cases.filter((c) => c.asksUser).length;
    expect(asking / cases.length).toBeGreaterThan(0.35);
    expect(asking / cases.length).toBeLessThan(0.65);
  });

  it(`precision ≥ ${pct(minPrecision)} and recall ≥ ${pct(minRecall)}`, () => {
    const s = score(cases);
    const precision = s.tp / (s.tp + s.fp);
    const recall = s.tp / (s.tp + s.fn);
    console.log(
      `text questions, ${name}: ${cases.length} cases, precision ${pct(precision)}, recall ${pct(recall)} (tp ${s.tp}, fp ${s.fp}, fn ${s.fn}, tn ${s.tn})${s.misses.length ? `\n  ${s.misses.join("\n  ")}` : ""}`,
    );
    expect(precision).toBeGreaterThanOrEqual(minPrecision);
    expect(recall).toBeGreaterThanOrEqual(minRecall);
  });
});

describe("detectTextQuestion: the rules one by one", () => {
  it.each<[string, string, boolean]>([
    ["a direct question at the end", "Tests pass.\n\nShould I also update the migrations?", true],
    [
      "a question in the final paragraph, then its reason",
      "Which Node version do you deploy? I need it for the build target.",
      true,
    ],
    ["a request without a question mark", "Two options: SQLite or a JSON file. Let me know which you prefer.", true],
    ["an imperative to pick", "- zod\n- valibot\n\nPick one and I'll use it everywhere.", true],
    ["a y/n prompt", "Force-push `main` now? (y/n)", true],
    ["full-width question mark", "数据库用 SQLite 还是 PostgreSQL？", true],
    ["a plain summary", "Done: the parser handles nested quotes and the tests pass.", false],
    [
      "a rhetorical question answered",
      "Why did it fail? Because the cache key ignored the locale. Fixed in `cache.ts`.",
      false,
    ],
    ["a question mark only in code", "Fixed:\n\n```ts\nconst id = user?.id ?? fallback;\n```", false],
    ["a question mark only in a URL", "See https://example.com/search?q=todo for the API.", false],
    ["a quoted question", 'You asked "why is it slow?" — it was an N+1 query; fixed.', false],
    ["a heading phrased as a question", "## What's next?\n\nI'll write the docs after lunch.", false],
    ["a courtesy closer", "All done. Let me know if you have any questions!", false],
    ["an empty message", "", false],
  ])("%s → %s", (_what, text, asks) => {
    expect(detectTextQuestion(text).asks).toBe(asks);
  });

  it("gives the deciding sentence as evidence, clipped", () => {
    expect(detectTextQuestion("Ready.\n\nShould I deploy to staging?").evidence).toBe("Should I deploy to staging?");
    const long = `Should I ${"really ".repeat(60)}do it?`;
    expect(detectTextQuestion(long).evidence!.length).toBeLessThanOrEqual(161);
  });
});
