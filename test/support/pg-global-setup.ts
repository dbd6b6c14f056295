// One real PostgreSQL server for the whole test run, whichever projects use it (each test creates its own databases on
// it). Started here, in vitest's main process, once for the first project that needs it and stopped after the last.
import type { TestProject } from "vitest/node";
import type {} from "./pg-database.js";
import { PostgresServer } from "./postgres.js";

/** Kept on the process, not the module: each project loads its own copy of this module. */
const shared = globalThis as { todoContinuationTestServer?: { server: Promise<PostgresServer>; users: number } };

export async function setup(project: TestProject): Promise<() => Promise<void>> {
  const entry = (shared.todoContinuationTestServer ??= { server: PostgresServer.start(), users: 0 });
  entry.users++;
  const running = await entry.server;
  project.provide("pgPort", running.port);
  project.provide("pgDir", running.dir);
  return async () => {
    if (--entry.users > 0) return;
    shared.todoContinuationTestServer = undefined;
    await running.destroy();
  };
}
