import { describe, expect, it } from "vitest";
import {
  HASHES_PER_FILE,
  judgeFiles,
  LEDGER_FILES,
  mergeFileLedger,
  parseFileLedger,
  serializeFileLedger,
  withDiskHashes,
  type FileEvidence,
  type FileLedger,
  type TurnFiles,
} from "../../src/core/work.js";

const own = (...files: FileEvidence[]): TurnFiles => ({ answers: "own", files });

/** Plays turns one after another, each judged against the ledger the ones before left: what each counted as. */
function play(turns: FileEvidence[][], start: FileLedger | null = null): string[] {
  let ledger = start;
  return turns.map((files) => {
    const turn = own(...files);
    const { changed, churned } = judgeFiles(ledger, turn);
    ledger = mergeFileLedger(ledger, turn);
    return `${changed} changed, ${churned} churned`;
  });
}

describe("which turns changed the project's files", () => {
  it.each<{ case: string; turns: FileEvidence[][]; counted: string[] }>([
    {
      case: "a new file each turn",
      turns: [[{ path: "/p/1", before: null, after: "a" }], [{ path: "/p/2", before: null, after: "b" }]],
      counted: ["1 changed, 0 churned", "1 changed, 0 churned"],
    },
    {
      case: "an edit to a file (new content each time)",
      turns: [[{ path: "/p/x", after: "a" }], [{ path: "/p/x", after: "b" }], [{ path: "/p/x", after: "c" }]],
      counted: ["1 changed, 0 churned", "1 changed, 0 churned", "1 changed, 0 churned"],
    },
    {
      case: "the same content written again",
      turns: [[{ path: "/p/x", after: "a" }], [{ path: "/p/x", after: "a" }], [{ path: "/p/x", after: "a" }]],
      counted: ["1 changed, 0 churned", "0 changed, 1 churned", "0 changed, 1 churned"],
    },
    {
      case: "an edit, then its undo, back and forth (the before of the first is unknown: that undo counts once)",
      turns: [
        [{ path: "/p/x", after: "b" }],
        [{ path: "/p/x", after: "a" }],
        [{ path: "/p/x", after: "b" }],
        [{ path: "/p/x", after: "a" }],
      ],
      counted: ["1 changed, 0 churned", "1 changed, 0 churned", "0 changed, 1 churned", "0 changed, 1 churned"],
    },
    {
      case: "an edit whose before the turn knows, then its undo",
      turns: [[{ path: "/p/x", before: "a", after: "b" }], [{ path: "/p/x", after: "a" }]],
      counted: ["1 changed, 0 churned", "0 changed, 1 churned"],
    },
    {
      case: "a cycle through three versions",
      turns: [
        [{ path: "/p/x", before: "a", after: "b" }],
        [{ path: "/p/x", after: "c" }],
        [{ path: "/p/x", after: "a" }],
        [{ path: "/p/x", after: "b" }],
      ],
      counted: ["1 changed, 0 churned", "1 changed, 0 churned", "0 changed, 1 churned", "0 changed, 1 churned"],
    },
    {
      case: "a file created, then deleted, then created with the same content",
      turns: [
        [{ path: "/p/x", before: null, after: "a" }],
        [{ path: "/p/x", after: null }],
        [{ path: "/p/x", before: null, after: "a" }],
      ],
      counted: ["1 changed, 0 churned", "0 changed, 1 churned", "0 changed, 1 churned"],
    },
    {
      case: "reads only, or a todo closed with no file",
      turns: [[], []],
      counted: ["0 changed, 0 churned", "0 changed, 0 churned"],
    },
    {
      case: "an edit whose content is unknown: the tool's line counts say",
      turns: [[{ path: "/p/x", changed: true }], [{ path: "/p/x", changed: false }], [{ path: "/p/x" }]],
      counted: ["1 changed, 0 churned", "0 changed, 1 churned", "1 changed, 0 churned"],
    },
    {
      case: "several files in one turn, one of them rewritten with what it had",
      turns: [
        [
          { path: "/p/x", after: "a" },
          { path: "/p/y", after: "b" },
        ],
        [
          { path: "/p/x", after: "a" },
          { path: "/p/y", after: "c" },
          { path: "/p/z", before: null, after: "d" },
        ],
      ],
      counted: ["2 changed, 0 churned", "2 changed, 1 churned"],
    },
  ])("$case", ({ turns, counted }) => {
    expect(play(turns)).toEqual(counted);
  });

  it("status churn with writes of identical content: the files never count", () => {
    const same = [{ path: "/p/notes.md", after: "n" }];
    expect(play([same, same, same, same])).toEqual([
      "1 changed, 0 churned",
      "0 changed, 1 churned",
      "0 changed, 1 churned",
      "0 changed, 1 churned",
    ]);
  });
});

describe("the file ledger", () => {
  it(`keeps the last ${HASHES_PER_FILE} contents of a file, a repeated one moved to the end`, () => {
    let ledger: FileLedger | null = null;
    for (const after of ["a", "b", "c", "d", "e", "c"]) ledger = mergeFileLedger(ledger, own({ path: "/p/x", after }));
    expect(ledger!.files["/p/x"]).toEqual(["b", "d", "e", "c"]);
  });

  it(`keeps the ${LEDGER_FILES} files touched most recently`, () => {
    let ledger: FileLedger | null = null;
    for (let i = 0; i < LEDGER_FILES + 5; i++) ledger = mergeFileLedger(ledger, own({ path: `/p/${i}`, after: "h" }));
    ledger = mergeFileLedger(ledger, own({ path: "/p/5", after: "h2" }));
    const paths = Object.keys(ledger!.files);
    expect(paths).toHaveLength(LEDGER_FILES);
    expect(paths[0]).toBe("/p/6");
    expect(paths.at(-1)).toBe("/p/5");
  });

  it("a turn with no files leaves it as it was; a person's turn is a baseline too", () => {
    const ledger = { files: { "/p/x": ["a"] } };
    expect(mergeFileLedger(ledger, undefined)).toBe(ledger);
    expect(mergeFileLedger(null, { answers: "other", files: [{ path: "/p/y", after: "b" }] })).toEqual({
      files: { "/p/y": ["b"] },
    });
  });

  it("round-trips through JSON; anything else reads as no ledger", () => {
    const ledger = { files: { "/p/x": ["a", null], "/p/y": ["b"] } };
    expect(parseFileLedger(serializeFileLedger(ledger))).toEqual(ledger);
    expect(serializeFileLedger(null)).toBeNull();
    for (const bad of [null, "", "not json", "[]", '{"files":[]}', '{"files":3}'])
      expect(parseFileLedger(bad)).toBeNull();
    expect(parseFileLedger('{"files":{"/p/x":["a"],"/p/y":[1],"/p/z":"a"}}')).toEqual({ files: { "/p/x": ["a"] } });
  });
});

describe("what the disk says beats what the tool said", () => {
  const turn = own(
    { path: "/p/formatted", after: "as-written" },
    { path: "/p/edited", changed: true },
    { path: "/p/unreadable", after: "w" },
    { path: "/p/gone" },
    { path: "/p/elsewhere", after: "w" },
  );

  it("a hash replaces the tool's; a file gone is null unless the turn wrote it; an unreadable one stays as it was", () => {
    const hashes = { "/p/formatted": "on-disk", "/p/edited": "e", "/p/gone": null, "/p/elsewhere": null };
    expect(withDiskHashes(turn, hashes).files).toEqual([
      { path: "/p/formatted", after: "on-disk" },
      { path: "/p/edited", changed: true, after: "e" },
      { path: "/p/unreadable", after: "w" },
      { path: "/p/gone", after: null },
      { path: "/p/elsewhere", after: "w" },
    ]);
  });
});
