// The plugin inside a real OpenCode 1.18.33 with `databasePath` set to a postgres:// URL: Bun's built-in SQL client
// inside OpenCode, against a real PostgreSQL server started for this file. OpenCode killed mid-countdown and the
// PostgreSQL server stopped mid-countdown run on the simulated OpenCode (durability-on-sim.test.ts), the plugin in the
// same Bun; here, what needs OpenCode itself: a continuation as its model sees it, and the slash commands.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { PostgresServer, query } from "../support/postgres.js";
import { E2E } from "./support/harness.js";
import { HEADER } from "./support/world.js";
import { textOf } from "./support/scripted-model.js";
import { script } from "./scenarios.js";

let postgres: PostgresServer;
let world: E2E;

// One OpenCode for both cases, each in a session of its own: a server's start and first turn cost ~7 CPU-s.
beforeAll(async () => {
  postgres = await PostgresServer.start();
  world = new E2E(script, { databasePath: await postgres.createDatabase("e2e") });
  await world.start();
}, 90_000);
afterAll(async () => {
  await world?.stop();
  await postgres?.destroy();
});

describe("the plugin in a real OpenCode on PostgreSQL", () => {
  it("continues a session once, every row in PostgreSQL (written through Bun's SQL client)", async () => {
    const url = world.dbPath;
    const id = await world.session("basic");
    await world.prompt(id, "scenario: basic");
    await world.waitForAudit(id, "injected", 20_000);
    await world.waitForAudit(id, "skipped:todos_complete", 15_000);
    const continuation = world.continuationRequests("basic");
    expect(continuation).toHaveLength(1);
    expect(textOf(continuation[0]!.messages.at(-1)!.content).startsWith(HEADER)).toBe(true);
    expect(world.trail(id)).toEqual(["armed", "fired", "injected", "skipped:todos_complete"]);
    expect(world.injections(id)).toMatchObject([{ status: "sent", todos_open: 2, todos_total: 3 }]);
    const { rows: replicas } = await query(url, "SELECT kind, host FROM replicas");
    expect(replicas).toContainEqual(expect.objectContaining({ kind: "plugin" }));
  });

  it("/stop-continuation holds; /resume-continuation lets it continue", async () => {
    const id = await world.session("stop");
    await world.prompt(id, "scenario: stop");
    await world.waitForAudit(id, "armed");
    world.server.client.session
      .command({ path: { id }, body: { command: "stop-continuation", arguments: "" } })
      .catch(() => undefined);
    await world.waitForAudit(id, "stopped:command");
    await world.waitForAudit(id, "skipped:stopped", 15_000);
    expect(world.countdowns(id)).toMatchObject([{ state: "cancelled", end_reason: "stopped" }]);
    expect(await world.trailAtRest(id, "skipped:stopped")).toEqual([
      "armed",
      "stopped:command",
      "cancelled:stopped",
      "skipped:stopped",
    ]);
    expect(world.injections(id)).toEqual([]);
    world.server.client.session
      .command({ path: { id }, body: { command: "resume-continuation", arguments: "" } })
      .catch(() => undefined);
    await world.waitForAudit(id, "unstopped:command");
    await world.waitForAudit(id, "injected", 20_000);
    // prompt_async answers before the model is asked: wait for the request itself.
    await vi.waitFor(() => expect(world.continuationRequests("stop")).toHaveLength(1), { timeout: 15_000 });
  });
});
