// What must outlive a SIGKILL of OpenCode and its restart: the durable stop set by /stop-continuation, until
// /resume-continuation (a slash command, which only a real OpenCode runs), and OpenCode's own wait to retry after a
// provider's 429, which lives only in OpenCode's memory and survives as the enforcer's park. A countdown interrupted by
// the kill, resumed or found too late after the restart, runs on the simulated OpenCode (durability-on-sim.test.ts): no
// model, no command, only the plugin's clock and rows. There a restart takes the plugin's own start, not OpenCode's,
// whose tens of seconds on a loaded machine outlasted the 8 s countdown the resume is measured against.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sleep } from "../support/wait-for.js";
import { E2E } from "./support/harness.js";
import { limitRequestTimes, script } from "./scenarios.js";

describe("restarts of OpenCode", () => {
  // No stagger: a limit's park wakes at the reset itself.
  const world = new E2E(script, { wakeJitterSeconds: 0 });
  beforeAll(async () => {
    await world.start();
  }, 60_000);
  afterAll(async () => {
    await world.stop();
  });

  it(
    "/stop-continuation stops it, also after a restart; /resume-continuation lets it continue again",
    { timeout: 90_000 },
    async () => {
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

  it(
    "a 429 with retry-after 40 s, OpenCode killed 10 s into its own wait: no request before the reset, then one continuation",
    { timeout: 120_000 },
    async () => {
      const id = await world.session("limit-retry");
      await world.prompt(id, "scenario: limit-retry");
      const parked = await world.waitForAudit(id, "parked:opencode_retry", 30_000);
      const until = parked.detail.until as number;
      expect(until - parked.at).toBeGreaterThan(35_000);
      expect(parked.detail).toMatchObject({ attempt: 1, message: expect.stringMatching(/rate limit/i) });
      await sleep(Math.max(0, parked.at + 10_000 - Date.now()));
      await world.crashServer();
      const killedAt = Date.now();
      await world.startServer();
      // Nothing of OpenCode's wait survived it: only the park wakes the session.
      const woke = await world.waitForAudit(id, "woke:time", 60_000);
      expect(woke.at).toBeGreaterThanOrEqual(until);
      expect(await world.trailAtRest(id, "skipped:todos_complete", 30_000)).toEqual([
        "parked:opencode_retry",
        "woke:time",
        "armed",
        "fired",
        "injected",
        "skipped:todos_complete",
      ]);
      const times = limitRequestTimes.get("limit-retry")!;
      expect(times.filter((t) => t > killedAt && t < until)).toEqual([]);
      expect(world.continuationRequests("limit-retry")).toHaveLength(1);
      expect(JSON.stringify(world.continuationRequests("limit-retry")[0])).toContain("the provider's limit has reset");
      expect((await world.todos(id)).every((t) => t.status === "completed")).toBe(true);
    },
  );
});
