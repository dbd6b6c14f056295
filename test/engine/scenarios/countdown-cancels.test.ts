// What cancels a countdown: a user message after the grace period, the assistant's or a tool's activity, a busy or
// retrying status, an error, the session deleted; and what does not: an echo of a known message, a message within the
// grace period, activity in another session.
// A real engine on a real database, OpenCode played by a scripted host (one-session.ts).
import { beforeEach, describe, expect, it, vi } from "vitest";
import { ev } from "../../support/events.js";
import { advance } from "../../support/fake-time.js";
import { gateChanges } from "../../support/store-spies.js";
import { boot, f, idle, S, settle, useOneSession, userSays } from "./one-session.js";

useOneSession();

describe("what cancels a countdown", () => {
  beforeEach(async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
  });

  it("a user message after the grace period cancels (user_message)", async () => {
    await idle();
    await advance(600);
    userSays();
    await advance(3000);
    await settle();
    expect(f.host.prompts).toHaveLength(0);
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "user_message" }]);
  });

  it("a user message within the grace period does not cancel", async () => {
    await idle();
    await advance(100);
    userSays();
    await advance(3000);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
    expect(f.rows.trail(S)).toEqual(["armed", "fired", "injected"]);
  });

  it("an echo of a known user message never cancels", async () => {
    const message = ev.userMessage(S);
    f.enforcer.handleEvent(message);
    f.enforcer.handleEvent(ev.textPart(S, message.properties.info.id, "hello"));
    await idle();
    await advance(1000);
    f.enforcer.handleEvent(message);
    await advance(2000);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
  });

  const activities: Array<[string, () => void, string]> = [
    ["assistant message.updated", () => f.enforcer.handleEvent(ev.assistantMessage(S)), "assistant_activity"],
    ["message.part.updated", () => f.enforcer.handleEvent(ev.partUpdated(S)), "assistant_activity"],
    ["message.part.delta", () => f.enforcer.handleEvent(ev.delta(S)), "assistant_activity"],
    ["tool.execute.before", () => f.enforcer.toolActivity(S, "before"), "tool_activity"],
    ["tool.execute.after", () => f.enforcer.toolActivity(S, "after"), "tool_activity"],
    ["session.status busy", () => f.enforcer.handleEvent(ev.status(S, "busy")), "busy"],
    ["session.status retry", () => f.enforcer.handleEvent(ev.status(S, "retry")), "recovering"],
    ["session.error", () => f.enforcer.handleEvent(ev.error(S, "APIError")), "session_error"],
  ];
  it.each(activities)("%s cancels (%s)", async (_name, act, reason) => {
    await idle();
    await advance(100);
    act();
    await advance(3000);
    await settle();
    expect(f.host.prompts).toHaveLength(0);
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: reason }]);
    expect(f.rows.audit(S)).toContainEqual(expect.objectContaining({ event: "cancelled", reason }));
  });

  it("a streamed chunk that arrives while the countdown's row is being written cancels it all the same", async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
    // Whichever backend the run uses: its store's arm waits for the test's say-so.
    const { open: release, restore } = gateChanges(f.port, "arm", "before");
    const arming = vi.spyOn(f.port, "change");
    f.enforcer.handleEvent(ev.idle(S));
    await vi.waitFor(() => expect(arming.mock.calls.some(([change]) => change.name === "arm")).toBe(true));
    f.enforcer.handleEvent(ev.delta(S));
    release();
    await advance(2100);
    await settle();
    expect(f.host.prompts).toHaveLength(0);
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "assistant_activity" }]);
    arming.mockRestore();
    restore();
  });

  it("activity in other sessions does not cancel", async () => {
    await idle();
    f.enforcer.handleEvent(ev.delta("ses_other"));
    f.enforcer.handleEvent(ev.partUpdated("ses_other"));
    f.enforcer.toolActivity("ses_other", "before");
    await advance(2100);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
  });

  it("deleting the session mid-countdown injects nothing and forgets it", async () => {
    await idle();
    f.enforcer.handleEvent(ev.deleted(S));
    await advance(3000);
    await settle();
    expect(f.host.prompts).toHaveLength(0);
    expect(f.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "session_deleted" }]);
    expect(f.rows.session(S)?.deleted_at).toEqual(expect.any(Number));
    expect(f.enforcer.stats()).toMatchObject({ armed: 0, timers: 0 });
  });
});
