// Loop protection: continuations that make progress go on; stagnation and the continuation budget stop them, a real
// user message resets the budget; the enforcer's own continuations are never taken for the user's activity.
// A real engine on a real database, OpenCode played by a scripted host (one-session.ts).
import { describe, expect, it } from "vitest";
import { ev } from "../../support/events.js";
import { advance } from "../../support/fake-time.js";
import { boot, f, idle, S, settle, useOneSession, userSays } from "./one-session.js";

useOneSession();

describe("loop protection", () => {
  async function cycle(todos: Array<[string, string]>) {
    f.host.setTodos(S, todos);
    await idle();
    await advance(2100);
    await settle();
  }

  it("consecutive continuations with progress are not throttled", async () => {
    await boot();
    const states: Array<Array<[string, string]>> = [
      [
        ["a", "in_progress"],
        ["b", "pending"],
        ["c", "pending"],
        ["d", "pending"],
        ["e", "pending"],
      ],
      [
        ["a", "completed"],
        ["b", "in_progress"],
        ["c", "pending"],
        ["d", "pending"],
        ["e", "pending"],
      ],
      [
        ["a", "completed"],
        ["b", "completed"],
        ["c", "in_progress"],
        ["d", "pending"],
        ["e", "pending"],
      ],
      [
        ["a", "completed"],
        ["b", "completed"],
        ["c", "completed"],
        ["d", "in_progress"],
        ["e", "pending"],
      ],
      [
        ["a", "completed"],
        ["b", "completed"],
        ["c", "completed"],
        ["d", "completed"],
        ["e", "in_progress"],
      ],
    ];
    for (const todos of states) await cycle(todos);
    expect(f.host.prompts).toHaveLength(5);
    expect(f.rows.session(S)).toMatchObject({ continuations: 5, stagnant_continuations: 0 });
  });

  it("stagnation stops after stagnationLimit continuations without status progress; progress resets it", async () => {
    await boot({ stagnationLimit: 3 });
    const stuck: Array<[string, string]> = [
      ["a", "pending"],
      ["b", "pending"],
    ];
    for (let i = 0; i < 5; i++) await cycle(stuck);
    expect(f.host.prompts).toHaveLength(3);
    expect(f.rows.audit(S).at(-1)).toMatchObject({
      event: "skipped",
      reason: "stagnation",
      detail: { unproductiveContinuations: 3, limit: 3 },
    });
    await cycle([
      ["a", "completed"],
      ["b", "pending"],
    ]);
    expect(f.host.prompts).toHaveLength(4);
  });

  it("the budget's last continuation finishing the list is done, not a budget spent", async () => {
    await boot({ maxContinuations: 2, stagnationLimit: 100 });
    await cycle([
      ["a", "pending"],
      ["b", "pending"],
    ]);
    await cycle([
      ["a", "completed"],
      ["b", "pending"],
    ]);
    expect(f.host.prompts).toHaveLength(2);
    // The turn of the last continuation closes the last todo, as OpenCode reports it, and the session goes idle.
    const done: Array<[string, string]> = [
      ["a", "completed"],
      ["b", "completed"],
    ];
    f.enforcer.handleEvent(ev.todos(S, done));
    await cycle(done);
    expect(f.host.prompts).toHaveLength(2);
    expect(f.rows.audit(S).at(-1)).toMatchObject({
      event: "skipped",
      reason: "todos_complete",
      detail: { total: 2, completed: 2, reported: true },
    });
  });

  it("the budget stops at maxContinuations; a real user message resets it", async () => {
    await boot({ maxContinuations: 2, stagnationLimit: 100 });
    await cycle([
      ["a", "pending"],
      ["b", "pending"],
      ["c", "pending"],
    ]);
    await cycle([
      ["a", "completed"],
      ["b", "pending"],
      ["c", "pending"],
    ]);
    await cycle([
      ["a", "completed"],
      ["b", "completed"],
      ["c", "pending"],
    ]);
    expect(f.host.prompts).toHaveLength(2);
    expect(f.rows.audit(S).at(-1)).toMatchObject({
      event: "skipped",
      reason: "budget_exhausted",
      detail: { continuations: 2, limit: 2 },
    });
    userSays();
    await cycle([
      ["a", "completed"],
      ["b", "completed"],
      ["c", "pending"],
    ]);
    expect(f.host.prompts).toHaveLength(3);
  });

  it("its own injected messages are not user activity", async () => {
    await boot({ maxContinuations: 2, stagnationLimit: 100 });
    await cycle([
      ["a", "pending"],
      ["b", "pending"],
      ["c", "pending"],
    ]);
    const { text: injected, messageId } = f.host.prompts[0]!;
    const own = ev.userMessage(S, messageId);
    f.enforcer.handleEvent(own);
    f.enforcer.handleEvent(ev.textPart(S, own.properties.info.id, injected));
    f.enforcer.handleEvent(ev.status(S, "busy"));
    await cycle([
      ["a", "completed"],
      ["b", "pending"],
      ["c", "pending"],
    ]);
    // Had the injection counted as a user message, the budget would have been reset to 0 before this cycle.
    expect(f.rows.session(S)).toMatchObject({ continuations: 2 });
    await cycle([
      ["a", "completed"],
      ["b", "completed"],
      ["c", "pending"],
    ]);
    expect(f.host.prompts).toHaveLength(2);
    expect(f.rows.audit(S).at(-1)).toMatchObject({ reason: "budget_exhausted" });
  });

  it("an own injection arriving during a countdown does not cancel it like a user would", async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
    await idle();
    await advance(700);
    // Another process's continuation: recorded with the message id it chose before its prompt call.
    f.db.run(
      `INSERT INTO injections (id, session_id, countdown_id, message_id, directory, created_at, status, todos_total, todos_open, owner, lease_until, updated_at)
       VALUES ('inj_fromotherproc', ?, 'cd_other', 'msg_fromotherproc', '/work/project', ?, 'pending', 1, 1, 'otherhost/1/live', ?, ?)`,
      S,
      Date.now(),
      Date.now() + 60_000,
      Date.now(),
    );
    const own = ev.userMessage(S, "msg_fromotherproc");
    f.enforcer.handleEvent(own);
    f.enforcer.handleEvent(ev.textPart(S, own.properties.info.id, "x\n[todo-continuation id=inj_fromotherproc]"));
    await advance(1500);
    await settle();
    expect(f.rows.audit(S).map((r) => r.reason)).not.toContain("user_message");
  });
});
