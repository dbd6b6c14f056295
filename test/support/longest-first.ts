// The order test files start in: longest first, across projects, so that the run does not end with one worker busy
// for minutes while the other waits. vitest's own order runs projects one after another and, without the timings of
// an earlier run (a fresh clone has none), larger files first, which starts the crash suite (a short file that runs for
// minutes) last.
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The files that run for a minute or more here, known before any run has been timed. */
const LONG_RUNNING = [
  "test/crash/multiprocess.test.ts",
  "test/crash/crash.test.ts",
  "test/e2e/work.test.ts",
  "test/e2e/fleet.test.ts",
  "test/e2e/faults.test.ts",
  "test/e2e/judgement.test.ts",
  "test/store/bun-lost-answer.bun.test.ts",
];

/** Seconds a file of each project takes when neither timed nor listed above: real processes before in-process. */
const PROJECT_SECONDS: Record<string, number> = {
  opencode: 20,
  system: 20,
  cli: 5,
  "engine-on-postgres": 2,
  postgres: 2,
};

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    /** Milliseconds: the last run's, else a guess (the listed files first, a bigger file after a smaller one). */
    const estimate = (spec: TestSpecification): number => {
      const path = relative(root, spec.moduleId);
      const timed = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`);
      if (timed) return timed.duration;
      const listed = LONG_RUNNING.indexOf(path);
      if (listed >= 0) return 300_000 - listed;
      const size = this.ctx.cache.getFileStats(`${spec.project.name}:${path}`)?.size ?? 0;
      return (PROJECT_SECONDS[spec.project.name] ?? 0.5) * 1000 + size / 100;
    };
    const order = new Map(files.map((spec) => [spec, estimate(spec)]));
    return [...files].sort(
      (a, b) =>
        a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder || order.get(b)! - order.get(a)!,
    );
  }
}
