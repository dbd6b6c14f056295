// Failing prompt calls: retried with exponential backoff up to the bound, each attempt audited; a retry that succeeds
// clears the failures once the turn runs; a call that timed out after OpenCode took it is sent, never resent.
// A real engine on a real database, OpenCode played by a scripted host (one-session.ts).
import { describe, expect, it } from "vitest";
import { ev } from "../../support/events.js";
import { advance } from "../../support/fake-time.js";
import { boot, f, idle, S, settle, useOneSession } from "./one-session.js";

useOneSession();

describe("failing prompts", () => {
  it("back off exponentially and stop after the bound, each attempt audited", async () => {
    await boot({ maxRetries: 2, retryBaseMs: 1000 });
    f.host.setTodos(S, [["a", "pending"]]);
    f.host.promptDefault = "fail";
    await idle();
    await advance(2500); // countdown 2 s, then the failed call is looked up in the session (300 ms)
    await settle();
    expect(f.host.calls.prompt).toBe(1);
    expect(f.rows.session(S)).toMatchObject({ consecutive_failures: 1 });
    await advance(1500);
    await settle();
    expect(f.host.calls.prompt).toBe(2);
    await advance(2500);
    await settle();
    expect(f.host.calls.prompt).toBe(3);
    await advance(60_000);
    await settle();
    expect(f.host.calls.prompt).toBe(3);
    expect(f.rows.injections(S).map((i) => i.status)).toEqual(["failed", "failed", "failed"]);
    const failures = f.rows.audit(S).filter((r) => r.event === "injection_failed");
    expect(failures.map((r) => [r.reason, r.detail.retryInMs ?? "final"])).toEqual([
      ["retrying", 1000],
      ["retrying", 2000],
      ["gave_up", "final"],
    ]);
    expect(f.rows.countdowns(S).map((c) => c.attempt)).toEqual([0, 1, 2]);
  });

  it("a retry succeeds and clears the failure count", async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
    f.host.promptScript = ["fail"];
    await idle();
    await advance(2500);
    await settle();
    await advance(1000);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
    // Sent is not yet started: the failures in a row end when the turn is seen running.
    expect(f.rows.session(S)).toMatchObject({ consecutive_failures: 1, backoff_until: null, continuations: 1 });
    f.enforcer.handleEvent(ev.status(S, "busy"));
    await settle();
    expect(f.rows.session(S)).toMatchObject({ consecutive_failures: 0, recheck_at: null });
  });

  it("a prompt that times out but was accepted is recorded as sent, never resent", async () => {
    await boot({ promptTimeoutMs: 500 });
    f.host.setTodos(S, [["a", "pending"]]);
    f.host.promptScript = ["hang"];
    f.host.hangAccepts = true;
    await idle();
    await advance(2100);
    await advance(900);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
    expect(f.rows.injections(S)).toMatchObject([{ status: "sent" }]);
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "injected", detail: { afterTimeout: true } });
  });
});
