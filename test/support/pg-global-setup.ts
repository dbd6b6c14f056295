// One real PostgreSQL server for the whole test run (each test file creates its own databases on it). Started here,
// in vitest's main process, so that a missing server fails the run at once with the command that installs it.
import type { TestProject } from "vitest/node";
import type {} from "./pg-database.js";
import { PostgresServer } from "./postgres.js";

let server: PostgresServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  server = await PostgresServer.start();
  project.provide("pgPort", server.port);
  project.provide("pgDir", server.dir);
}

export async function teardown(): Promise<void> {
  await server?.destroy();
}
