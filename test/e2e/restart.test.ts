// The durable stop set by /stop-continuation, which must hold across a SIGKILL of OpenCode and its restart until
// /resume-continuation: a slash command, which only a real OpenCode runs. A countdown interrupted by the kill, resumed
// or found too late after the restart, runs on the simulated OpenCode (durability-on-sim.test.ts): no model, no
// command, only the plugin's clock and rows. There a restart takes the plugin's own start, not OpenCode's, whose tens
// of seconds on a loaded machine outlasted the 8 s countdown the resume is measured against.
import { afterEach, describe, expect, it } from "vitest";
import { E2E } from "./support/harness.js";
import { script } from "./scenarios.js";

let world: E2E | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

describe("restarts of OpenCode", () => {
  it(
    "/stop-continuation stops it, also after a restart; /resume-continuation lets it continue again",
    { timeout: 90_000 },
    async () => {
      world = new E2E(script, {});
      await world.start();
      const id = await world.session("stop");
      await world.prompt(id, "scenario: stop");
      await world.waitForAudit(id, "armed");
      // The command call lasts the whole turn; the server is killed under it later, so its outcome is not awaited.
      world.server.client.session
        .command({ path: { id }, body: { command: "stop-continuation", arguments: "" } })
        .catch(() => undefined);
      await world.waitForAudit(id, "stopped:command");
      await world.waitForAudit(id, "skipped:stopped", 15_000);
      expect(world.countdowns(id)).toMatchObject([{ state: "cancelled", end_reason: "stopped" }]);
      const commandRequest = world.requestsFor("stop").at(-1)!;
      expect(JSON.stringify(commandRequest.messages.at(-1))).toContain("Automatic todo continuation is now stopped");

      await world.crashServer();
      await world.startServer();
      const before = world.audit(id).length;
      await world.prompt(id, "keep going please");
      await world.waitForAudit(id, "skipped:stopped", 15_000, before);
      expect(await world.trailAtRest(id, "skipped:stopped")).toEqual([
        "armed",
        "stopped:command",
        "cancelled:stopped",
        "skipped:stopped",
        "skipped:stopped",
      ]);
      expect(world.injections(id)).toEqual([]);

      world.server.client.session
        .command({ path: { id }, body: { command: "resume-continuation", arguments: "" } })
        .catch(() => undefined);
      await world.waitForAudit(id, "unstopped:command");
      await world.waitForAudit(id, "injected", 20_000);
      await world.waitForAudit(id, "skipped:todos_complete", 15_000);
      expect(world.continuationRequests("stop")).toHaveLength(1);
      expect(world.trail(id).filter((t) => /stopped|injected/.test(t))).toEqual([
        "stopped:command",
        "cancelled:stopped",
        "skipped:stopped",
        "skipped:stopped",
        "unstopped:command",
        "injected",
      ]);
    },
  );
});
