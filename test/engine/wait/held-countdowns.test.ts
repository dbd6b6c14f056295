import { describe, expect, it } from "vitest";
import { HeldCountdowns, type Armed } from "../../../src/engine/wait/held-countdowns.js";
import type { CountdownRow } from "../../../src/store/schema.js";

const armed = (sessionId: string, id = `cd_${sessionId}`): Armed => ({
  row: { id, sessionId } as CountdownRow,
  dueMono: 0,
  resumed: null,
});

describe("the countdowns a process holds in memory", () => {
  it("counts the armed and the arming, through every change, as the hot path reads it", () => {
    const held = new HeldCountdowns();
    expect(held.size).toBe(0);
    held.hold(armed("a"));
    held.startArming("b");
    expect(held.size).toBe(2);
    expect([held.has("a"), held.has("b"), held.has("c")]).toEqual([true, true, false]);
    // A new countdown of a held session replaces the old one: still one session.
    held.hold(armed("a", "cd_newer"));
    expect(held.size).toBe(2);
    expect(held.armedFor("a")?.row.id).toBe("cd_newer");
    expect(held.release("a")?.row.id).toBe("cd_newer");
    expect(held.release("a")).toBeUndefined();
    expect(held.size).toBe(1);
    held.endArming("b");
    expect(held.size).toBe(0);
    expect(held.has("b")).toBe(false);
  });

  it("keeps the first activity that came during an arming, and none when nothing is being armed", () => {
    const held = new HeldCountdowns();
    held.cancelArming("a", { reason: "user_message", detail: {} });
    expect(held.cancelledWhileArming("a")).toBeUndefined();
    held.startArming("a");
    expect(held.cancelledWhileArming("a")).toBeNull();
    held.cancelArming("a", { reason: "assistant_activity", detail: { n: 1 } });
    held.cancelArming("a", { reason: "user_message", detail: { n: 2 } });
    expect(held.cancelledWhileArming("a")).toEqual({ reason: "assistant_activity", detail: { n: 1 } });
  });

  it("drops every arming under way at once, and lists the sessions armed", () => {
    const held = new HeldCountdowns();
    held.startArming("a");
    held.startArming("b");
    held.hold(armed("c"));
    held.dropArmings();
    expect(held.size).toBe(1);
    expect(held.sessions()).toEqual(["c"]);
  });
});
