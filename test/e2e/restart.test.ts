// OpenCode killed with SIGKILL during a countdown and started again on the same files; and the durable stop set by
// /stop-continuation, which must hold across a restart until /resume-continuation. A countdown found too late after
// the restart runs on the simulated OpenCode (durability-on-sim.test.ts): no model, no command, only the plugin's clock.
import { afterEach, describe, expect, it } from "vitest";
import { sleep } from "../support/wait-for.js";
import { E2E } from "./support/harness.js";
import { script } from "./scenarios.js";

let world: E2E | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

describe("restarts of OpenCode", () => {
  it("a countdown interrupted by SIGKILL resumes after the restart and the continuation arrives once", async () => {
    world = new E2E(script, { countdownSeconds: 8 });
    await world.start();
    const id = await world.session("restart");
    await world.prompt(id, "scenario: restart");
    const armed = await world.waitForAudit(id, "armed");
    // Killed 1.5 s into the 8 s countdown (by its armed row's time): where the scenario crashes, not a wait for an outcome.
    await sleep(Math.max(0, armed.at + 1500 - Date.now()));
    const killedAt = Date.now();
    await world.crashServer();
    expect(world.countdowns(id)).toMatchObject([{ state: "armed" }]);
    await world.startServer();
    const resumed = await world.waitForAudit(id, "resumed:restart");
    const remaining = resumed.detail.remainingMs as number;
    expect(remaining).toBeGreaterThan(0);
    expect(remaining).toBeLessThanOrEqual(8000 - (killedAt - armed.at));
    const injected = await world.waitForAudit(id, "injected", 20_000);
    expect(injected.at - armed.at).toBeGreaterThanOrEqual(8000);
    expect(await world.trailAtRest(id, "skipped:todos_complete", 15_000)).toEqual([
      "armed",
      "resumed:restart",
      "fired",
      "injected",
      "skipped:todos_complete",
    ]);
    expect(world.continuationRequests("restart")).toHaveLength(1);
    expect(world.injections(id)).toMatchObject([{ status: "sent" }]);
    expect(world.trail(id)).toEqual(["armed", "resumed:restart", "fired", "injected", "skipped:todos_complete"]);
    console.log(
      `e2e restart: killed ${killedAt - armed.at} ms into an 8 s countdown, resumed ${resumed.at - killedAt} ms later with ${remaining} ms left; continuation ${injected.at - armed.at} ms after arming`,
    );
  });

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
