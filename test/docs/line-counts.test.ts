// No line counts in prose: a file's length is stale after its next change, and says nothing of what the file does.
// The pages of docs/, the README, CONTRIBUTING and the CHANGELOG, and the comments of src/, test/, scripts/ and bench/
// are read sentence by sentence; one that names a source file and gives a number of lines fails here, as does a
// source file followed by a colon and a bare number. A limit is not a count ("over N lines", "the N-line limit"),
// and a sentence that names no source file (a transcript's lines) is left alone.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const PAGES = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"];
const COMMENTED = ["src", "test", "scripts", "bench"];

const SOURCE_FILE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs|sql)\b/;
/** A number of lines: `684 lines`, `1,135-line`, `385–399 lines`. */
const LINES = /\d[\d,]*(?:\s*[–-]\s*\d[\d,]*)?[\s-]+lines?\b/gi;
/** A source file followed by a colon and a bare number, closing a parenthesis or followed by "lines". */
const FILE_COLON_COUNT = /\.(?:ts|tsx|mts|cts|js|mjs|cjs|sql)`?\s*:\s+\d[\d,]*\s*(?:\)|lines?\b)/g;
const LIMIT_BEFORE = /\b(?:over|under|than|most|least|max(?:imum)?|limit(?:ed)?|beyond|past|within|to|of)\s+$/i;
const LIMIT_AFTER = /^\s*(?:limit|cap|maximum|rule|budget|ceiling)\b/i;

interface Found {
  where: string;
  text: string;
}

/** The sentences of `text`, each with the line it starts on (1-based, from `firstLine`). */
function sentences(text: string, firstLine = 1): Array<{ line: number; text: string }> {
  const found: Array<{ line: number; text: string }> = [];
  const boundary = /(?<=[.!?])\s+(?=[A-Z`("*_[])|\n\s*\n/g;
  let start = 0;
  const push = (end: number) => {
    const piece = text.slice(start, end);
    if (piece.trim()) found.push({ line: firstLine + (text.slice(0, start).match(/\n/g)?.length ?? 0), text: piece });
  };
  for (const match of text.matchAll(boundary)) {
    push(match.index);
    start = match.index + match[0].length;
  }
  push(text.length);
  return found;
}

/** The line counts a sentence states of source files (empty when it states none). */
function lineCountsIn(sentence: string): string[] {
  const counts: string[] = [];
  for (const match of sentence.matchAll(FILE_COLON_COUNT)) counts.push(match[0]);
  if (!SOURCE_FILE.test(sentence)) return counts;
  for (const match of sentence.matchAll(LINES)) {
    const before = sentence.slice(0, match.index);
    const after = sentence.slice(match.index + match[0].length);
    if (LIMIT_BEFORE.test(before) || LIMIT_AFTER.test(after)) continue;
    counts.push(match[0]);
  }
  return counts;
}

function filesUnder(folder: string, ext: RegExp): string[] {
  const files: string[] = [];
  for (const name of readdirSync(folder)) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const path = join(folder, name);
    if (statSync(path).isDirectory()) files.push(...filesUnder(path, ext));
    else if (ext.test(name)) files.push(path);
  }
  return files;
}

/** A source file's comments, each block of consecutive comment lines as one text. */
function commentBlocks(source: string): Array<{ line: number; text: string }> {
  const blocks: Array<{ line: number; text: string }> = [];
  let current: { line: number; lines: string[] } | undefined;
  source.split("\n").forEach((line, i) => {
    const comment = /^\s*(?:\/\/+|\/\*+|\*(?!\/))\s?(.*?)(?:\*\/)?$/.exec(line);
    if (comment) {
      current ??= { line: i + 1, lines: [] };
      current.lines.push(comment[1]!);
      return;
    }
    if (current) blocks.push({ line: current.line, text: current.lines.join("\n") });
    current = undefined;
  });
  if (current) blocks.push({ line: current.line, text: current.lines.join("\n") });
  return blocks;
}

function countsStated(): Found[] {
  const found: Found[] = [];
  const look = (file: string, blocks: Array<{ line: number; text: string }>) => {
    for (const block of blocks)
      for (const sentence of sentences(block.text, block.line))
        for (const text of lineCountsIn(sentence.text))
          found.push({ where: `${relative(ROOT, file)}:${sentence.line}`, text });
  };
  const pages = [...filesUnder(join(ROOT, "docs"), /\.md$/), ...PAGES.map((page) => join(ROOT, page))];
  for (const page of pages) look(page, [{ line: 1, text: readFileSync(page, "utf8") }]);
  for (const folder of COMMENTED)
    for (const file of filesUnder(join(ROOT, folder), /\.[cm]?[jt]sx?$/))
      look(file, commentBlocks(readFileSync(file, "utf8")));
  return found;
}

describe("no line counts in prose", () => {
  it("no page and no comment states a source file's line count", () => {
    expect(countsStated()).toEqual([]);
  });

  it("tells a file's line count from a limit, a line reference or a transcript's lines", () => {
    const counts = [
      "For PostgreSQL that is the runner (`pg/statements.ts`, `prepared.ts`: 684 lines), and the store.",
      "The owners it counts alive (`live-owners.ts`: 199), connecting and migrating.",
      "The composition root, src/engine/enforcer.ts (272 lines), builds the parts.",
      "The 1,135-line `cli/main.ts` lists every command.",
    ];
    for (const sentence of counts) expect(lineCountsIn(sentence), sentence).not.toEqual([]);
    const notCounts = [
      "It checks that no file in src/ is over 400 lines and no function over 80 (`test/layout.test.ts`).",
      "Split `engine/enforcer.ts` by job, not to pass the 400-line limit.",
      "Our continuation shows in the transcript as a full user message block (about 20 lines).",
      "The guard that said no is at `src/core/decide.ts:120`, one line per reason.",
      "The documentation moved out of a 1,135-line README into its own pages.",
    ];
    for (const sentence of notCounts) expect(lineCountsIn(sentence), sentence).toEqual([]);
  });

  it("reads a page sentence by sentence, a count and a file in different sentences apart", () => {
    const page = "The table has 12 lines.\nEach row names a file such as `a.ts`.\n\n`b.ts` (30 lines) holds it.";
    const found = sentences(page).flatMap((s) => lineCountsIn(s.text).map((text) => ({ line: s.line, text })));
    expect(found).toEqual([{ line: 4, text: "30 lines" }]);
  });
});
