// The durable stop: it holds across restarts and real user messages until it is resumed.
// A real engine on a real database, OpenCode played by a scripted host (one-session.ts).
import { describe, expect, it } from "vitest";
import { advance } from "../../support/fake-time.js";
import { boot, f, idle, restart, S, settle, useOneSession, userSays } from "./one-session.js";

useOneSession();

describe("the durable stop", () => {
  it("holds across restarts and user messages until resumed", async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
    await idle();
    expect(await f.enforcer.stop(S, "command")).toBe(true);
    expect(await f.enforcer.stop(S, "command")).toBe(false);
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "stopped" }]);
    userSays();
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "stopped" });

    const { host } = f;
    await restart({ retryBaseMs: 1000 });
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "stopped" });
    expect(await f.enforcer.resume(S, "command")).toBe(true);
    await idle();
    await advance(2100);
    await settle();
    expect(host.prompts).toHaveLength(1);
    expect(f.rows.trail(S).filter((t) => t.startsWith("stopped") || t.startsWith("unstopped"))).toEqual([
      "stopped:command",
      "unstopped:command",
    ]);
  });
});
