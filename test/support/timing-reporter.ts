// A reporter beside vitest's default one (vitest.config.ts): after every run, each project's time and the ten slowest
// files, in a small table, so that a slide of the test loop is seen the day it happens rather than when it has grown
// into minutes (docs/testing.md).
import type { Reporter, TestModule, Vitest } from "vitest/node";

/** What one file cost its worker (setting up, importing and running it), and when it ended. */
export interface FileTime {
  project: string;
  file: string;
  tests: number;
  ms: number;
  /** Milliseconds on the clock of the process that runs vitest. */
  endedAt: number;
}

const SLOWEST = 10;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Columns padded to their widest cell; the first `left` columns flush left, the rest flush right. */
function table(rows: string[][], left: number): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) =>
    row
      .map((cell, column) => (column < left ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join("  ")
      .trimEnd(),
  );
}

/**
 * The lines printed after a run: per project its files, tests, wall time (its first file started to its last ended) and
 * worker time (its files' times added: above the wall time when files ran side by side); then the slowest files.
 */
export function timingLines(files: FileTime[]): string[] {
  const projects = [...new Set(files.map((f) => f.project))].sort();
  const perProject = projects.map((project) => {
    const own = files.filter((f) => f.project === project);
    const wall = Math.max(...own.map((f) => f.endedAt)) - Math.min(...own.map((f) => f.endedAt - f.ms));
    return [
      project,
      String(own.length),
      String(own.reduce((sum, f) => sum + f.tests, 0)),
      seconds(wall),
      seconds(own.reduce((sum, f) => sum + f.ms, 0)),
    ];
  });
  const slowest = [...files]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, SLOWEST)
    .map((f) => [f.project, f.file, seconds(f.ms)]);
  return [
    ...table([["project", "files", "tests", "wall", "worker time"], ...perProject], 1),
    ...table([["project", `the ${SLOWEST} slowest files`, "time"], ...slowest], 2),
  ];
}

export class TimingReporter implements Reporter {
  private vitest: Vitest | undefined;
  private readonly endedAt = new Map<string, number>();

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunStart(): void {
    this.endedAt.clear();
  }

  onTestModuleEnd(module: TestModule): void {
    this.endedAt.set(module.id, performance.now());
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const files = modules.map((module): FileTime => {
      const d = module.diagnostic();
      return {
        project: module.project.name,
        file: module.relativeModuleId,
        tests: [...module.children.allTests()].length,
        ms: d.setupDuration + d.collectDuration + d.duration,
        endedAt: this.endedAt.get(module.id) ?? performance.now(),
      };
    });
    if (files.length > 0) this.vitest?.logger.log(["", ...timingLines(files), ""].join("\n"));
  }
}
