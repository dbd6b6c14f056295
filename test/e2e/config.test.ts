// A bad option must not harm OpenCode: one clear error in OpenCode's log naming the key, the enforcer off, and
// sessions working as if the plugin were not there.
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E } from "./support/harness.js";
import { script } from "./scenarios.js";

describe("an invalid plugin option", () => {
  const world = new E2E(script, { countdownSeconds: "soon", stagnationLimit: 3 });

  beforeAll(async () => {
    await world.start();
  }, 60_000);
  afterAll(async () => {
    await world.stop();
  });

  it("is reported once in OpenCode's log, turns the enforcer off and leaves OpenCode working", async () => {
    const id = await world.session("basic");
    await world.prompt(id, "scenario: basic");
    await world.waitFor("the model's last call of the turn", () => world.requestsFor("basic").length >= 2);
    // The plugin decided at load: its one line says it is off, and it opened no database (asserted below), so it has
    // nothing to arm or send with. The last thing it could act on is the turn's idle: wait for OpenCode to report it.
    await world.waitFor("the turn to end", () => world.sessionIdle(id));
    const errors = world.server
      .output()
      .split("\n")
      .filter((line) => line.includes("todo-continuation is off"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('countdownSeconds = \\"soon\\"');
    expect(errors[0]).toContain("allowed: a number from 0 to 3600");
    expect(await world.todos(id)).toHaveLength(3);
    expect(world.continuationRequests("basic")).toEqual([]);
    expect(existsSync(world.dbPath)).toBe(false);
  });
});
