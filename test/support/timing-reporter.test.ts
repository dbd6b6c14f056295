import { describe, expect, it } from "vitest";
import { timingLines, type FileTime } from "./timing-reporter.js";

const file = (project: string, name: string, seconds: number, endedAtSeconds: number): FileTime => ({
  project,
  file: `test/${name}.test.ts`,
  tests: 3,
  ms: seconds * 1000,
  endedAt: endedAtSeconds * 1000,
});

describe("the timing reporter's table", () => {
  it("gives each project its files, tests, wall and worker time, then the ten slowest files, slowest first", () => {
    const files = [
      // Two workers: a and b side by side from 0 s, c after a; the files of cli one after another from 19 s.
      file("fast", "a", 4, 4),
      file("fast", "b", 9, 9),
      file("fast", "c", 3, 7),
      ...Array.from({ length: 10 }, (_, i) => file("cli", `cli-${i}`, 1 + i / 10, 20 + i)),
    ];
    expect(timingLines(files)).toEqual([
      "project  files  tests    wall  worker time",
      "cli         10     30  10.0 s       14.5 s",
      "fast         3      9   9.0 s       16.0 s",
      "project  the 10 slowest files   time",
      "fast     test/b.test.ts        9.0 s",
      "fast     test/a.test.ts        4.0 s",
      "fast     test/c.test.ts        3.0 s",
      "cli      test/cli-9.test.ts    1.9 s",
      "cli      test/cli-8.test.ts    1.8 s",
      "cli      test/cli-7.test.ts    1.7 s",
      "cli      test/cli-6.test.ts    1.6 s",
      "cli      test/cli-5.test.ts    1.5 s",
      "cli      test/cli-4.test.ts    1.4 s",
      "cli      test/cli-3.test.ts    1.3 s",
    ]);
  });
});
