import { defineConfig } from "vitest/config";

/**
 * The engine-level suites that also run on PostgreSQL (TC_TEST_STORE=postgres): the same tests, a database of their own
 * on the run's PostgreSQL server instead of a SQLite file. The collaborator suites (countdowns, injector) judge owners
 * by pid on purpose and stay on SQLite; the port itself is proven on both by test/store/port-contract.test.ts.
 */
const ON_POSTGRES = [
  "test/engine/enforcer.test.ts",
  "test/engine/scenarios/judgement.test.ts",
  "test/engine/scenarios/delivery.test.ts",
  "test/engine/scenarios/notices.test.ts",
  "test/engine/scenarios/hostile-events.test.ts",
  "test/engine/scenarios/host-faults.test.ts",
  "test/engine/scenarios/restart.test.ts",
  "test/engine/scenarios/security.test.ts",
  "test/engine/scenarios/gave-up.test.ts",
  "test/engine/scenarios/resume-holds.test.ts",
];

/**
 * Suites that load the whole machine (four OpenCode servers at full CPU for minutes): run on their own, after the
 * others (`npm test` runs this project second), so that neither they nor the others' timings suffer from sharing it.
 */
const ALONE = ["test/e2e/fleet.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A real PostgreSQL server for the tests that use one (started once per project, a database per test).
    globalSetup: ["test/support/pg-global-setup.ts"],
    setupFiles: ["test/support/remove-temp-folders.ts"],
    projects: [
      { extends: true, test: { name: "sqlite", include: ["test/**/*.test.ts"], exclude: ALONE } },
      { extends: true, test: { name: "postgres", include: ON_POSTGRES, env: { TC_TEST_STORE: "postgres" } } },
      { extends: true, test: { name: "alone", include: ALONE } },
    ],
  },
});
