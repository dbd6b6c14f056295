// notices.ts promises: which skips make a notice and of what kind (all done only after continuations; a countdown, a
// person's own stop or an idle with nothing to say never); a notice's body says what the toast says (explain.ts), the
// todos, what the continuations cost and the way on, naming the session; and its title and lines for the channels
// that show text.
import { describe, expect, it } from "vitest";
import { explain } from "../../src/core/explain.js";
import {
  NOTICE_KINDS,
  noticeKindOf,
  noticeLines,
  noticeOf,
  noticeTitle,
  wayOn,
  type Notice,
  type NoticeFacts,
  type NoticeKind,
} from "../../src/core/notices.js";
import { wayOnFrom } from "../../src/core/holds.js";
import { CANCEL_REASONS, SKIP_REASONS } from "../../src/core/reasons.js";

/** The skips each kind is made by; every other skip makes none. */
const MADE_BY: Record<NoticeKind, string[]> = {
  question: ["waiting_for_user"],
  budget: ["budget_exhausted", "cost_budget"],
  stuck: ["stagnation", "no_progress_reply", "gave_up", "verify_failed"],
  done: ["todos_complete"],
  error: ["provider_error", "errors_persist", "token_limit"],
  waiting: ["parked"],
};
const KINDS: Record<string, NoticeKind> = Object.fromEntries(
  Object.entries(MADE_BY).flatMap(([kind, reasons]) => reasons.map((reason) => [reason, kind as NoticeKind])),
);

const AT = Date.UTC(2026, 10, 27, 9, 30, 0);

function facts(reason: string, detail: Record<string, unknown>, more: Partial<NoticeFacts> = {}): NoticeFacts {
  return {
    id: "ntc_1",
    now: AT,
    directory: "/home/you/my-project",
    sessionId: "ses_42",
    reason,
    detail,
    todos: { total: 5, completed: 3, open: 2 },
    continuations: { count: 4, cost: 0.0024, tokens: 12_000 },
    ...more,
  };
}

function notice(reason: string, detail: Record<string, unknown>, more: Partial<NoticeFacts> = {}): Notice {
  const made = noticeOf(facts(reason, detail, more));
  if (!made) throw new Error(`no notice for ${reason}`);
  return made;
}

describe("which skips make a notice", () => {
  it.each(SKIP_REASONS.map((reason) => [reason, KINDS[reason]] as const))(
    "%s after continuations: %s",
    (reason, kind) => {
      expect(noticeKindOf(reason, true)).toBe(kind);
    },
  );

  it("every kind has a skip that makes it", () => {
    expect(Object.keys(MADE_BY).sort()).toEqual([...NOTICE_KINDS].sort());
  });

  it("all done is news only after continuations; every other kind is told either way", () => {
    expect(noticeKindOf("todos_complete", false)).toBeUndefined();
    for (const [reason, kind] of Object.entries(KINDS).filter(([, kind]) => kind !== "done"))
      expect(noticeKindOf(reason, false), reason).toBe(kind);
  });

  it("a person's own stop, a pause, a countdown's cancel and a reason it does not know make none", () => {
    for (const reason of ["stopped", "user_took_over", "user_key", "no_todos", "busy", ...CANCEL_REASONS])
      expect(noticeKindOf(reason, true), reason).toBeUndefined();
    expect(noticeKindOf("not_a_reason", true)).toBeUndefined();
  });

  it("noticeOf makes none where noticeKindOf says none: all done without continuations, a stop by the user", () => {
    expect(noticeOf(facts("todos_complete", {}, { continuations: { count: 0, cost: 0, tokens: 0 } }))).toBeUndefined();
    expect(noticeOf(facts("stopped", { stopSource: "command" }))).toBeUndefined();
    expect(noticeOf(facts("todos_complete", {}))?.kind).toBe("done");
  });
});

describe("the notice's body", () => {
  it("a daily cap: the toast's words and hint as sentences, the todos, the cost, and the way to allow more", () => {
    const detail = { budget: "daily_cost", spent: 0.003, limit: 0.003 };
    const made = notice("cost_budget", detail, { title: "Fix the parser" });
    const words = explain("skipped", "cost_budget", detail)!;
    expect(words.text).toBe("stopped: $0.003 of $0.003 today");
    expect(made).toEqual({
      format: 1,
      id: "ntc_1",
      kind: "budget",
      at: "2026-11-27T09:30:00.000Z",
      directory: "/home/you/my-project",
      session: { id: "ses_42", title: "Fix the parser" },
      reason: "cost_budget",
      text: "Stopped: $0.003 of $0.003 today.",
      hint: "Palette: Allow more to go on.",
      todos: { done: 3, open: 2, total: 5 },
      continuations: { count: 4, cost: 0.0024, tokens: 12_000 },
      goOn: { palette: "Allow more todo continuations", command: "todo-continuation allow ses_42" },
    });
  });

  it("a spent budget of continuations: the command allows more of them", () => {
    const made = notice("budget_exhausted", { continuations: 20, spent: 0.5 });
    expect([made.kind, made.text, made.hint]).toEqual([
      "budget",
      "Stopped: the budget of 20 is spent.",
      "$0.50 spent; palette: Allow more.",
    ]);
    expect(made.goOn).toEqual({
      palette: "Allow more todo continuations",
      command: "todo-continuation allow ses_42",
    });
  });

  it("a question: no hint, no title when none is known, and the way on is the session itself", () => {
    const made = notice("waiting_for_user", { source: "request" }, { todos: undefined });
    expect([made.kind, made.text, "hint" in made, made.session]).toEqual([
      "question",
      "Waiting: a request needs you.",
      false,
      { id: "ses_42" },
    ]);
    expect(made.todos, "no todos read: none counted").toEqual({ done: 0, open: 0, total: 0 });
    expect(made.goOn).toEqual({ palette: "(answer in the session)", command: "opencode --session ses_42" });
    expect(notice("waiting_for_user", {}).text).toBe("Waiting: the assistant asked you.");
  });

  it("stuck: the toast's count of turns, and the way on is a resume of the session", () => {
    const made = notice("stagnation", { unproductiveContinuations: 3 });
    expect([made.kind, made.text, made.hint]).toEqual([
      "stuck",
      "Stopped: 3 times without progress.",
      "/resume-continuation to go on.",
    ]);
    expect(made.goOn).toEqual({ palette: "Resume todo continuation", command: "todo-continuation resume ses_42" });
    expect(notice("gave_up", { failures: 4 }).text).toBe("Stopped: sending failed 4 times.");
  });

  it("all done after continuations: the counts and cost of those continuations", () => {
    const continuations = { count: 7, cost: 1.25, tokens: 80_000 };
    const made = notice("todos_complete", {}, { todos: { total: 5, completed: 5, open: 0 }, continuations });
    expect([made.kind, made.text, "hint" in made]).toEqual(["done", "Done: every todo is closed.", false]);
    expect([made.todos, made.continuations]).toEqual([{ done: 5, open: 0, total: 5 }, continuations]);
    expect(made.goOn.command).toBe("opencode --session ses_42");
  });

  it("an error: the provider's words and status, and the way on is a resume", () => {
    const made = notice("provider_error", { statusCode: 401 });
    expect([made.kind, made.text, made.hint, made.goOn.command]).toEqual([
      "error",
      "Stopped: the provider refused (401).",
      "Fix it, then /resume-continuation.",
      "todo-continuation resume ses_42",
    ]);
  });

  it("every kind's text is the toast's sentence for its reason", () => {
    for (const reason of Object.keys(KINDS)) {
      const words = explain("skipped", reason, {})!;
      const text = `${words.text[0]!.toUpperCase()}${words.text.slice(1)}.`;
      expect(notice(reason, {}).text, reason).toBe(text);
    }
  });
});

describe("the way on", () => {
  const toldStops = SKIP_REASONS.filter((reason) => {
    const kind = noticeKindOf(reason, true);
    return kind !== undefined && kind !== "question" && kind !== "done";
  });

  it("names the session in every command", () => {
    for (const kind of NOTICE_KINDS) expect(wayOn(kind, "stagnation", "ses_X").command, kind).toContain("ses_X");
    for (const reason of toldStops)
      expect(wayOn(noticeKindOf(reason, true)!, reason, "ses_X").command, reason).toContain("ses_X");
  });

  it("a budget is answered by allowing more (as much again, the command's default)", () => {
    expect(wayOn("budget", "budget_exhausted", "s")).toEqual({
      palette: "Allow more todo continuations",
      command: "todo-continuation allow s",
    });
  });

  it("a question and all done are answered in the session; stuck and a refusal are resumed", () => {
    expect(wayOn("done", "todos_complete", "s")).toEqual(wayOn("question", "waiting_for_user", "s"));
    expect(wayOn("error", "provider_error", "s")).toEqual({
      palette: "Resume todo continuation",
      command: "todo-continuation resume s",
    });
    expect(wayOn("stuck", "stagnation", "s")).toEqual(wayOn("error", "provider_error", "s"));
  });

  it("a full context is no stop a resume lifts: the person compacts or writes in the session", () => {
    expect(wayOn("error", "token_limit", "s")).toEqual({
      palette: "(compact or write in the session)",
      command: "opencode --session s (compact or write)",
    });
  });

  it("every told stop names the command status names for the same hold", () => {
    for (const reason of toldStops)
      expect(wayOn(noticeKindOf(reason, true)!, reason, "s").command, reason).toBe(wayOnFrom([reason], "s"));
  });
});

describe("title and lines", () => {
  it("the title is the project folder's name and what the kind means", () => {
    expect(noticeTitle(notice("waiting_for_user", {}))).toBe("my-project: needs an answer");
    expect(noticeTitle(notice("cost_budget", {}, { directory: "/srv/app/" }))).toBe("app: budget spent");
    expect(noticeTitle(notice("stagnation", {}, { directory: "C:\\work\\tool" }))).toBe("tool: stuck");
    expect(noticeTitle(notice("todos_complete", {}, { directory: "/" }))).toBe("/: done");
    expect(noticeTitle(notice("token_limit", {}))).toBe("my-project: stopped by an error");
  });

  const budget = () => notice("budget_exhausted", { continuations: 20 }, { title: "Fix the parser" });
  const question = () => notice("waiting_for_user", {}, { continuations: { count: 0, cost: 0, tokens: 0 } });
  it.each([
    [
      "says the words and hint, the session, the counts and cost, and the way on with its palette entry",
      budget,
      "Stopped: the budget of 20 is spent. Palette: Allow more to go on.",
      "Session Fix the parser (ses_42) in /home/you/my-project",
      "Todos: 3 done, 2 open. Continuations: 4, $0.002.",
      "Go on: todo-continuation allow ses_42 (palette: Allow more todo continuations)",
    ],
    [
      "leaves out a cost of nothing, a title not known, and a palette entry that is no entry",
      question,
      "Waiting: the assistant asked you.",
      "Session ses_42 in /home/you/my-project",
      "Todos: 3 done, 2 open. Continuations: 0.",
      "Go on: opencode --session ses_42",
    ],
  ])("%s", (_name, made, ...lines) => {
    expect(noticeLines(made())).toEqual(lines);
  });

  it("adds what was folded into it, in order", () => {
    const made = notice("stagnation", { unproductiveContinuations: 3 });
    const earlier = (id: string, text: string) => ({ id, kind: "question" as const, reason: "r", text, at: made.at });
    const lines = noticeLines({ ...made, folded: [earlier("a", "Waiting: one."), earlier("b", "Waiting: two.")] });
    expect(lines).toHaveLength(5);
    expect(lines[4]).toBe("Also since the last notice: Waiting: one. Waiting: two.");
    expect(noticeLines({ ...made, folded: [] })).toHaveLength(4);
  });
});
