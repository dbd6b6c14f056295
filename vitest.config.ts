import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A real PostgreSQL server for the tests that run on both backends (started once, a database per test file).
    globalSetup: ["test/support/pg-global-setup.ts"],
  },
});
