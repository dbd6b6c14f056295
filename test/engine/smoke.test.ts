import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ev } from "../support/events.js";
import { startEngine, type EngineFixture } from "../support/engine-fixture.js";

describe("smoke", () => {
  let f: EngineFixture;
  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"] });
    f = await startEngine();
  });
  afterEach(async () => {
    await f.destroy();
    vi.useRealTimers();
  });

  it("injects after the countdown", async () => {
    f.host.setTodos("s1", [["a", "completed"], ["b", "in_progress"], ["c", "pending"]]);
    f.host.addUserMessage("s1", "do it");
    f.enforcer.handleEvent(ev.idle("s1"));
    await vi.advanceTimersByTimeAsync(10);
    expect(f.rows.countdowns("s1")).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2500);
    await f.enforcer.settled();
    console.log(f.rows.trail("s1"), f.host.prompts[0]?.text, f.host.toasts.map((t) => t.message));
    expect(f.host.prompts).toHaveLength(1);
  });
});
