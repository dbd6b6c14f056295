// Every change script has a test file named after it (test/store/changes/arm.test.ts for src/store/changes/arm.ts),
// and every file of contract cases runs on every driver: its own test file runs it on better-sqlite3, and
// contract-cases.ts hands it to the runners of PostgreSQL and of OpenCode's Bun. Both lists are read from the folders,
// so that a script or a cases file added, renamed or split is checked as it is.
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CONTRACT } from "./contract-cases.js";

const ROOT = resolve(import.meta.dirname, "../..");
const HERE = import.meta.dirname;

/** The files below `folder` whose names end in `suffix`, as paths relative to it. */
function filesEnding(folder: string, suffix: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(suffix))
    .sort();
}

describe("the store's contract files", () => {
  it("gives every change script a test file named after it", () => {
    const scripts = filesEnding(join(ROOT, "src", "store", "changes"), ".ts");
    expect(scripts.length).toBeGreaterThan(0);
    const tests = new Set(filesEnding(join(HERE, "changes"), ".test.ts"));
    expect(scripts.filter((script) => !tests.has(script.replace(/\.ts$/, ".test.ts")))).toEqual([]);
  });

  // Sorted once the suffix is off: `claim-notices.cases.ts` sorts before `claim.cases.ts`, `claim-notices` after `claim`.
  const subjects = filesEnding(HERE, ".cases.ts")
    .map((file) => file.replace(/\.cases\.ts$/, ""))
    .sort();

  it("runs every file of cases on better-sqlite3 in a test file named after it", () => {
    const tests = new Set(filesEnding(HERE, ".test.ts"));
    expect(subjects.filter((subject) => !tests.has(`${subject}.test.ts`))).toEqual([]);
  });

  it("hands every file of cases, and no other, to the runners of the other drivers", () => {
    expect(CONTRACT.map((s) => s.subject).sort()).toEqual(subjects);
  });

  it("names every case once, so that a runner's results name each", () => {
    const names = CONTRACT.flatMap((s) => s.cases.map((c) => c.name));
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  });
});
