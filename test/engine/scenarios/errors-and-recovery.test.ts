// Errors, aborts and recovery: a transient error's cooldown, an abort that holds until real activity, a token-limit
// error until a real user message, and a session marked recovering until its recovery is complete.
// A real engine on a real database, OpenCode played by a scripted host (one-session.ts).
import { beforeEach, describe, expect, it } from "vitest";
import { ev } from "../../support/events.js";
import { advance } from "../../support/fake-time.js";
import { boot, f, idle, S, settle, useOneSession, userSays } from "./one-session.js";

useOneSession();

describe("errors, aborts and recovery", () => {
  beforeEach(async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
  });

  it("a transient error: the next idle arms a countdown that ends with the cooldown; a user message clears the cooldown", async () => {
    f.enforcer.handleEvent(ev.error(S, "APIError", "Internal server error"));
    const erroredAt = Date.now();
    await idle();
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "armed", deadline_at: erroredAt + 3000 }]);
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "armed", detail: { waitingFor: "error_cooldown" } });
    await advance(2900);
    await settle();
    expect(f.host.prompts).toHaveLength(0);
    await advance(200);
    await settle();
    expect(f.host.prompts).toHaveLength(1);

    f.enforcer.handleEvent(ev.error(S, "APIError", "Internal server error"));
    await settle();
    expect(f.rows.session(S)).toMatchObject({ error_streak: 1, last_error_kind: "transient" });
    userSays();
    await settle();
    expect(f.rows.session(S)).toMatchObject({ error_streak: 0, last_error_at: null, last_error_kind: null });
  });

  it("an abort blocks continuation until the next real activity, and resets failure counters", async () => {
    f.enforcer.handleEvent(ev.error(S, "MessageAbortedError", "The operation was aborted."));
    await idle();
    await advance(10_000);
    await idle();
    expect(
      f.rows
        .audit(S)
        .filter((r) => r.event === "skipped")
        .map((r) => r.reason),
    ).toEqual(["aborted", "aborted"]);
    expect(f.rows.session(S)).toMatchObject({ last_error_kind: "abort", consecutive_failures: 0 });
    userSays();
    await idle();
    await advance(2100);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
  });

  it("an abort seen only in the last assistant message blocks too", async () => {
    f.host.addAssistantMessage(S, { error: { name: "MessageAbortedError" } });
    await idle();
    expect(f.rows.audit(S)).toMatchObject([
      { event: "skipped", reason: "aborted", detail: { source: "last_assistant_message" } },
    ]);
  });

  it("new assistant output after an abort lifts it", async () => {
    f.enforcer.handleEvent(ev.error(S, "MessageAbortedError"));
    await advance(10);
    f.enforcer.handleEvent(ev.assistantMessage(S));
    await idle();
    expect(f.rows.countdowns(S)).toHaveLength(1);
  });

  it("a token-limit error stops continuation until a real user message", async () => {
    f.enforcer.handleEvent(ev.error(S, "APIError", "prompt is too long: 250000 tokens > 200000 maximum"));
    await advance(60_000);
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "token_limit" });
    userSays();
    await idle();
    expect(f.rows.countdowns(S)).toHaveLength(1);
  });

  it("recovering skips; recovery complete allows", async () => {
    f.enforcer.markRecovering(S);
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "recovering" });
    f.enforcer.markRecoveryComplete(S);
    await idle();
    await advance(2100);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
  });

  it("markRecovering cancels an armed countdown", async () => {
    await idle();
    f.enforcer.markRecovering(S);
    await advance(3000);
    await settle();
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "recovering" }]);
  });
});
