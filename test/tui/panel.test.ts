// What the sidebar panel says for each state and decision, without a terminal.
import { describe, expect, it } from "vitest";
import type { SessionView } from "../../src/store/operator/session-view.js";
import { panelLines, PANEL_TITLE, promptLine } from "../../src/tui/panel.js";
import { aSessionView } from "../support/session-view.js";

const NOW = 1_800_000_000_000;
const base = aSessionView();
const decided = (
  event: string,
  reason: string | null,
  detail: Record<string, unknown> = {},
  extra: Partial<SessionView> = {},
): SessionView => ({
  ...base,
  continuations: 2,
  maxContinuations: 20,
  lastDecision: { at: NOW - 1000, event, reason, detail },
  ...extra,
});
const text = (view: SessionView | { problem: string }, cancelKey = "esc") =>
  panelLines({ view, now: NOW, cancelKey }).map((l) => l.text);

describe("the sidebar panel", () => {
  it.each<[string, SessionView | { problem: string }, string[]]>([
    ["nothing decided yet", base, ["watching"]],
    [
      "a countdown running",
      {
        ...base,
        continuations: 1,
        maxContinuations: 20,
        countdown: { id: "cd_1", armedAt: NOW - 500, deadlineAt: NOW + 2500, todosOpen: 2, todosTotal: 3 },
      },
      ["continuing in 3s · esc cancels", "1 of 20 continuations"],
    ],
    [
      "a countdown at its deadline",
      { ...base, countdown: { id: "cd_1", armedAt: NOW - 2000, deadlineAt: NOW, todosOpen: 2, todosTotal: 3 } },
      ["continuing now…", "0 continuations sent"],
    ],
    [
      "stopped from the palette",
      { ...base, stoppedAt: NOW - 10, stopSource: "tui" },
      ["stopped from the palette", "palette: Resume todo continuation"],
    ],
    [
      "stopped with the command",
      { ...base, stoppedAt: NOW - 10, stopSource: "command" },
      ["stopped by /stop-continuation", "/resume-continuation to go on"],
    ],
    [
      "stopped from the command line",
      { ...base, stoppedAt: NOW - 10, stopSource: "cli" },
      ["stopped from the command line", "todo-continuation resume to go on"],
    ],
    [
      "stopped through the plugin's API",
      { ...base, stoppedAt: NOW - 10, stopSource: "api" },
      ["stopped", "/resume-continuation to go on"],
    ],
    [
      "the user stepped in",
      decided("skipped", "user_took_over", {}, { pausedAt: NOW - 5 }),
      ["paused: you stepped in", "move a todo or /resume-continuation", "2 of 20 continuations"],
    ],
    [
      "stagnation",
      decided("skipped", "stagnation", { unproductiveContinuations: 3, limit: 3 }),
      ["stopped: 3 times without progress", "/resume-continuation to go on", "2 of 20 continuations"],
    ],
    [
      "a worker that changed files and closed no todo",
      decided("injected", null, {
        progress: { counted: "files", filesChanged: 3 },
        work: { continuations: 3, limit: 8 },
      }),
      ["working: 3 files changed", "no todo closed yet (3 of 8)", "2 of 20 continuations"],
    ],
    [
      "stopped after work without a todo closed",
      decided("skipped", "stagnation", { work: "files", workContinuations: 8, limit: 8, filesChanged: 1 }),
      ["stopped: 8 turns of work, no todo", "/resume-continuation to go on", "2 of 20 continuations"],
    ],
    [
      "a continuation after a turn that closed a todo",
      decided("injected", null, { progress: { counted: "todos" }, work: { continuations: 0, limit: 8 } }),
      ["continued", "2 of 20 continuations"],
    ],
    [
      "what continuing cost, against the cost budget",
      decided("injected", null, {}, { spent: { cost: 0.12, tokens: 41_234 }, maxCost: 1 }),
      ["continued", "2 of 20 continuations", "41k tokens · $0.12 of $1.00"],
    ],
    [
      "what continuing cost, with no budget and a model without a price",
      decided("injected", null, {}, { spent: { cost: 0, tokens: 950 } }),
      ["continued", "2 of 20 continuations", "950 tokens · no price"],
    ],
    [
      "a cost budget set, and a model without a price: the budget cannot stop it",
      decided("injected", null, {}, { spent: { cost: 0, tokens: 41_234 }, maxCost: 1 }),
      ["continued", "2 of 20 continuations", "41k tokens · no price, no cost cap"],
    ],
    [
      "the cost budget spent",
      decided(
        "skipped",
        "cost_budget",
        { budget: "session_cost", spent: 1.02, limit: 1 },
        { spent: { cost: 1.02, tokens: 90_000 }, maxCost: 1 },
      ),
      [
        "stopped: $1.02 of $1.00 spent",
        "palette: Allow more to go on",
        "2 of 20 continuations",
        "90k tokens · $1.02 of $1.00",
      ],
    ],
    [
      "a text-only reply",
      decided("skipped", "no_progress_reply", { textOnlyReplies: 1 }),
      ["stopped: 1 reply without work", "/resume-continuation to go on", "2 of 20 continuations"],
    ],
    [
      "the budget",
      decided("skipped", "budget_exhausted", { continuations: 20, limit: 20 }),
      ["stopped: the budget of 20 is spent", "palette: Allow more to go on", "2 of 20 continuations"],
    ],
    [
      "a question in text",
      decided("skipped", "waiting_for_user", { source: "text_question" }),
      ["waiting: the assistant asked you", "2 of 20 continuations"],
    ],
    [
      "provider errors that persist",
      decided("skipped", "errors_persist", { errors: 4 }),
      ["stopped: 4 provider errors in a row", "/resume-continuation to go on", "2 of 20 continuations"],
    ],
    [
      "a permanent provider error",
      decided("skipped", "provider_error", { statusCode: 401 }),
      ["stopped: the provider refused (401)", "fix it, then /resume-continuation", "2 of 20 continuations"],
    ],
    [
      "sub-sessions working",
      decided("skipped", "children_running", { busyChildren: 2 }),
      ["waiting: 2 subagents still working", "2 of 20 continuations"],
    ],
    ["all done", decided("skipped", "todos_complete"), ["done: every todo is closed", "2 of 20 continuations"]],
    ["cancelled with the key", decided("cancelled", "user_key"), ["cancelled by you", "2 of 20 continuations"]],
    [
      "a second look at the same idle, after the key",
      decided("skipped", "user_key", { cancelledAt: NOW }),
      ["cancelled by you", "2 of 20 continuations"],
    ],
    [
      "retries given up",
      decided("injection_failed", "gave_up", { attempt: 4, final: true }),
      ["stopped: sending failed 4 times", "/resume-continuation to go on", "2 of 20 continuations"],
    ],
    [
      "a todo read that failed, tried again soon",
      decided("skipped", "todo_fetch_failed", { attempt: 1, retryInMs: 5000 }),
      ["could not read todos; retry in 5 s", "2 of 20 continuations"],
    ],
    [
      "todo reads given up until the next idle",
      decided("skipped", "todo_fetch_failed", { attempt: 4, final: true }),
      ["could not read the todos (4 times)", "looks again at the next idle", "2 of 20 continuations"],
    ],
    ["a continuation just sent", decided("injected", null), ["continued", "2 of 20 continuations"]],
    [
      "the database cannot be read",
      { problem: "cannot open the todo-continuation database /x.db: the folder is read-only" },
      ["unavailable: cannot open the todo-continuation database /x.db: the folder is read-only"],
    ],
  ])("%s", (_what, view, lines) => {
    expect(text(view)).toEqual([PANEL_TITLE, ...lines]);
  });

  it("names the configured cancel key", () => {
    const view = {
      ...base,
      countdown: { id: "cd_1", armedAt: NOW, deadlineAt: NOW + 1000, todosOpen: 1, todosTotal: 1 },
    };
    expect(text(view, "ctrl+y")[1]).toBe("continuing in 1s · ctrl+y cancels");
  });

  it("a park: until when (the day too when not today), why, and the key that ends it; beside the prompt as well", () => {
    const parked = (
      reason: "limit" | "opencode_retry" | "agent",
      inMs: number,
      checkCommand: string | null = null,
    ) => ({
      ...base,
      park: { id: "park_1", reason, wakeAt: NOW + inMs, checkCommand },
    });
    const CLOCK = "\\d\\d:\\d\\d( [AP]M)?";
    const limit = text(parked("limit", 3_600_000));
    expect(limit.slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^parked until ${CLOCK}$`)),
      "the limit resets",
      "esc ends the wait",
    ]);
    expect(text(parked("opencode_retry", 40_000))[2]).toBe("OpenCode retries");
    expect(text(parked("agent", 600_000, "gh run view"))[2]).toBe("or when its check passes");
    expect(text(parked("agent", 600_000), "ctrl+y").slice(2)).toEqual(["as asked", "ctrl+y ends the wait"]);
    expect(text(parked("agent", 3 * 86_400_000))[1]).toMatch(new RegExp(`^parked until [A-Z][a-z]{2},? ${CLOCK}$`));
    const beside = (view: SessionView, cancelKey = "esc") => promptLine({ view, now: NOW, cancelKey })?.text;
    expect(beside(parked("agent", 600_000))).toMatch(new RegExp(`^parked until ${CLOCK} · esc cancels$`));
    expect(beside(parked("agent", 3 * 86_400_000), "ctrl+y")).toMatch(
      new RegExp(`^parked until [A-Z][a-z]{2},? ${CLOCK}$`),
    );
    // A stop outranks the park it ended (a stop ends the park in the same transaction; a view read between shows it).
    expect(text({ ...parked("agent", 600_000), stoppedAt: NOW })[1]).toMatch(/^stopped/);
    expect(beside({ ...parked("agent", 600_000), stoppedAt: NOW })).toBe(undefined);
  });

  it("a check running: the command and its seconds, the key that cancels it; beside the prompt as well", () => {
    const checking = (command: string, forMs: number): SessionView => ({
      ...base,
      continuations: 2,
      maxContinuations: 20,
      checking: { id: "ver_1", command, startedAt: NOW - forMs },
    });
    expect(text(checking("npm test", 12_400))).toEqual([
      PANEL_TITLE,
      "checking: npm test · 12s",
      "esc cancels",
      "2 of 20 continuations",
    ]);
    // A command too long for the sidebar is left out of the line; the audit and `status` name it.
    const long = "npm run test -- --reporter=verbose --coverage";
    expect(text(checking(long, 3_000))[1]).toBe("checking · 3s");
    const beside = (view: SessionView) => promptLine({ view, now: NOW, cancelKey: "esc" })?.text;
    // Beside the prompt the key comes first: the command only when both fit.
    expect(beside(checking("make", 12_400))).toBe("checking: make · 12s · esc cancels");
    expect(beside(checking("npm test", 12_400))).toBe("checking · 12s · esc cancels");
    expect(beside(checking(long, 3_000))).toBe("checking · 3s · esc cancels");
  });

  it("a stop wins over a pause; a pause shows until the session moves", () => {
    expect(text(decided("skipped", "stopped", {}, { stoppedAt: NOW, stopSource: "tui", pausedAt: NOW }))[1]).toBe(
      "stopped from the palette",
    );
    expect(text(decided("armed", null, {}, { pausedAt: NOW }))[1]).toBe("continuing soon");
  });

  it("colours what needs the user apart from what is only information", () => {
    const tones = panelLines({
      view: decided("skipped", "stagnation", { unproductiveContinuations: 3 }),
      now: NOW,
      cancelKey: "esc",
    }).map((l) => l.tone);
    expect(tones).toEqual(["title", "warning", "muted", "muted"]);
  });
});
