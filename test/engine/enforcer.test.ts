// Enforcer (src/engine/enforcer.ts), the composition root: dispose stops the parts in order (the attempt running is
// recorded, those waiting for the global cap are handed back to the database), and OpenCode's events and tool calls,
// however malformed, are ignored and counted, never thrown. What the engine decides for a session, behaviour by
// behaviour, is in scenarios/. A real engine on a real database, OpenCode played by a scripted host.
import { describe, expect, it } from "vitest";
import { advance } from "../support/fake-time.js";
import { boot, f, idle, S, useOneSession } from "./scenarios/one-session.js";

useOneSession();

describe("shutdown", () => {
  it("with more continuations due than the global cap: the running one is recorded, the waiting ones handed back", async () => {
    await boot({ maxConcurrentInjections: 1, promptTimeoutMs: 5000 });
    const sessions = [S, "ses_two", "ses_three"];
    for (const id of sessions) {
      f.host.addUserMessage(id, "build the thing", { agent: "build", providerId: "scripted", modelId: "model-1" });
      f.host.setTodos(id, [["a", "pending"]]);
    }
    f.host.promptScript = ["hang"];
    for (const id of sessions) await idle(id);
    await advance(2100);
    // One prompt call runs (and hangs); the other two wait for the global cap. (Not settled: the call hangs.)
    expect(f.host.calls.prompt).toBe(1);
    let disposed = false;
    const disposing = f.enforcer.dispose().then(() => (disposed = true));
    // Time goes on (the hanging call times out, its answer is looked for); shutdown must end within it.
    for (let waited = 0; !disposed && waited < 60_000; waited += 1000) await advance(1000);
    expect(disposed).toBe(true);
    await disposing;
    expect(f.host.calls.prompt).toBe(1);
    const waiting = sessions.flatMap((id) => f.rows.countdowns(id)).filter((c) => c.state === "armed");
    expect(waiting).toHaveLength(2);
    expect(waiting.every((c) => c.owner === null)).toBe(true);
    expect(sessions.flatMap((id) => f.rows.injections(id))).toHaveLength(1);
  });
});

describe("hostile input", () => {
  it("malformed events are ignored and counted, never thrown", async () => {
    await boot();
    const junk: unknown[] = [
      null,
      1,
      "x",
      [],
      {},
      { type: "session.idle" },
      { type: "message.part.delta" },
      { type: "message.part.updated", properties: { part: 3 } },
      { type: "message.part.delta", properties: null },
    ];
    for (const event of junk) expect(() => f.enforcer.handleEvent(event)).not.toThrow();
    expect(f.enforcer.stats().eventsIgnored).toBeGreaterThanOrEqual(3);
    expect(() => f.enforcer.toolActivity(undefined, "before")).not.toThrow();
  });
});
