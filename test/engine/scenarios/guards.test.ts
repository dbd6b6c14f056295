// The guards fed by OpenCode's events and reads: child sessions, busy children, a pending question, skipped agents and
// agents without write permission, and `enabled: false` (every decision still audited).
// A real engine on a real database, OpenCode played by a scripted host (one-session.ts).
import { beforeEach, describe, expect, it } from "vitest";
import { ev } from "../../support/events.js";
import { boot, f, idle, S, useOneSession } from "./one-session.js";

useOneSession();

describe("guards fed by events and by the host", () => {
  beforeEach(async () => {
    await boot();
    f.host.setTodos(S, [["a", "pending"]]);
  });

  it("a child session is filtered unless configured", async () => {
    f.enforcer.handleEvent(ev.created("ses_child", S));
    f.host.setTodos("ses_child", [["a", "pending"]]);
    await idle("ses_child");
    expect(f.rows.audit("ses_child")).toMatchObject([
      { event: "skipped", reason: "session_filtered", detail: { parentId: S } },
    ]);
  });

  it("a busy child session holds the parent back (children_running)", async () => {
    f.host.children.set(S, ["ses_child"]);
    f.host.statuses = { ses_child: "busy" };
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({
      event: "skipped",
      reason: "children_running",
      detail: { busyChildren: 1 },
    });
  });

  it("a pending question holds it back until it is answered", async () => {
    f.enforcer.handleEvent(ev.question(S, "q1", true));
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ reason: "waiting_for_user" });
    f.enforcer.handleEvent(ev.question(S, "q1", false));
    await idle();
    expect(f.rows.countdowns(S)).toHaveLength(1);
  });

  it("skipAgents and agents without write permission", async () => {
    f.host.addUserMessage(S, "plan it", { agent: "plan" });
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ reason: "agent_skipped", detail: { agent: "plan" } });
    f.host.addUserMessage(S, "read it", { agent: "reader" });
    await idle();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ reason: "no_write_permission", detail: { agent: "reader" } });
  });

  it("disabled still audits each decision", async () => {
    await f.destroy();
    await boot({ enabled: false });
    f.host.setTodos(S, [["a", "pending"]]);
    await idle();
    expect(f.rows.audit(S)).toMatchObject([{ event: "skipped", reason: "disabled" }]);
    expect(f.host.calls.todos).toBe(0);
  });
});
