// Every string a person sees, at one todo and at several, against the width of the place it is shown in OpenCode
// 1.18.33's TUI: each row of the table is one string with its length and that width. Widths, as measured in the TUI:
// - the sidebar panel: 42 columns less padding (2 + 2) and its inner padding (1): 37 columns a line;
// - a toast: at most 60 columns (less at under 66), less its border (2) and padding (4): 54 columns a line;
// - a palette row: 52 columns for the title, a space and the description; a bound key takes its right end;
// - beside the prompt: what OpenCode's prompt row leaves at 80 columns next to "Build · Claude Sonnet 4.5 Anthropic".
// A line that fits is never wrapped, so no word (and no command) is cut; counts of one are singular.
import { describe, expect, it } from "vitest";
import { explain } from "../../src/core/explain.js";
import { LINE_WIDTH } from "../../src/core/words.js";
import { CANCEL_REASONS, SKIP_REASONS, STOP_SOURCES } from "../../src/core/reasons.js";
import { countdownToastText } from "../../src/engine/wait/countdown-toasts.js";
import { allowedSaying, SAID } from "../../src/tui/controls.js";
import { panelLines, promptLine } from "../../src/tui/panel.js";
import { PALETTE } from "../../src/tui/tui-plugin.js";
import { aSessionView } from "../support/session-view.js";

const SIDEBAR = 37;
const TOAST = 54;
const PALETTE_ROW = 52;
/** Room left for a bound key ("ctrl+y", "<leader>k") and the gap before it. */
const KEY_ROOM = 10;
const BESIDE_PROMPT = 36;

/** The details a decision carries, at a count of one and at a count of several. */
const DETAILS: Array<Record<string, unknown>> = [
  {
    attempt: 1,
    errors: 1,
    busyChildren: 1,
    textOnlyReplies: 1,
    unproductiveContinuations: 1,
    continuations: 1,
    retryInMs: 1000,
    statusCode: 401,
    agent: "plan",
    source: "request",
    state: "running",
    final: true,
  },
  {
    attempt: 12,
    errors: 12,
    busyChildren: 12,
    textOnlyReplies: 12,
    unproductiveContinuations: 12,
    continuations: 120,
    retryInMs: 30_000,
    statusCode: 403,
    agent: "reviewer",
    source: "text_question",
    state: "done",
    final: false,
  },
  // A stop after turns of work, and a continuation after one.
  { work: "files", workContinuations: 1, limit: 1, filesChanged: 1, unproductiveContinuations: 1 },
  { work: "files", workContinuations: 1000, limit: 1000, filesChanged: 64, unproductiveContinuations: 999 },
  { progress: { counted: "files", filesChanged: 1 }, work: { continuations: 1, limit: 1 } },
  { progress: { counted: "files", filesChanged: 64 }, work: { continuations: 999, limit: 1000 } },
  // The spend budgets, at their widest.
  { budget: "session_cost", spent: 999_999.99, limit: 1_000_000 },
  { budget: "session_cost", spent: 0.0449, limit: 0.05 },
  { budget: "session_tokens", spent: 123_456_789, limit: 99_000_000 },
  { budget: "daily_cost", spent: 999.99, limit: 999 },
  // A park of each kind, at its longest wait (just under 24 h: "23 h 59 min") and at its shortest.
  ...["limit", "opencode_retry", "agent"].flatMap((park) => [
    { park, wakesInMs: 24 * 3_600_000 - 30_000 },
    { park, wakesInMs: 1000 },
  ]),
];

type Row = [where: string, text: string, width: number];

function decisions(): Row[] {
  const rows: Row[] = [];
  const add = (what: string, explanation: ReturnType<typeof explain>) => {
    if (!explanation) return;
    rows.push([`${what}: panel line and toast`, explanation.text, LINE_WIDTH]);
    if (explanation.hint) rows.push([`${what}: its hint`, explanation.hint, LINE_WIDTH]);
  };
  for (const detail of DETAILS) {
    for (const reason of SKIP_REASONS) add(`skipped ${reason}`, explain("skipped", reason, detail));
    for (const source of STOP_SOURCES)
      add(`skipped stopped (${source})`, explain("skipped", "stopped", { ...detail, stopSource: source }));
    for (const reason of CANCEL_REASONS) add(`cancelled ${reason}`, explain("cancelled", reason, detail));
    for (const reason of ["retrying", "gave_up"])
      add(`injection_failed ${reason}`, explain("injection_failed", reason, detail));
    for (const event of ["armed", "fired", "injected", "expired", "unstopped"])
      add(event, explain(event, null, detail));
  }
  for (const source of STOP_SOURCES) add(`stopped (${source})`, explain("stopped", source));
  return rows;
}

const view = aSessionView;

function drawn(): Row[] {
  const NOW = 1_800_000_000_000;
  const counting = (todosOpen: number) => ({
    id: "cd",
    armedAt: NOW,
    deadlineAt: NOW + 10_000,
    todosOpen,
    todosTotal: todosOpen + 1,
  });
  const views = [
    view({ countdown: counting(1), continuations: 1, maxContinuations: 20 }),
    view({ countdown: counting(12), continuations: 19, maxContinuations: 120 }),
    view({ continuations: 1 }),
    view({ continuations: 12 }),
    view({
      continuations: 19,
      maxContinuations: 120,
      spent: { cost: 999_999.99, tokens: 123_456_789 },
      maxCost: 1_000_000,
    }),
    view({ continuations: 1, spent: { cost: 0.0049, tokens: 1 }, maxCost: 0.05 }),
    view({ continuations: 1, spent: { cost: 0, tokens: 123_456_789 }, maxCost: 0.05 }),
    ...STOP_SOURCES.map((stopSource) => view({ stoppedAt: NOW, stopSource })),
    // Parked: until today's time, and until another day's (the day named too), with a check and without.
    ...(["limit", "opencode_retry", "agent"] as const).flatMap((reason) =>
      [3_600_000, 3 * 86_400_000].map((inMs) =>
        view({ park: { id: "park_1", reason, wakeAt: NOW + inMs, checkCommand: reason === "agent" ? "true" : null } }),
      ),
    ),
    view({ park: { id: "park_1", reason: "agent", wakeAt: NOW + 600_000, checkCommand: null } }),
  ];
  const rows: Row[] = [];
  for (const cancelKey of ["esc", "ctrl+y"]) {
    for (const v of views) {
      for (const line of panelLines({ view: v, now: NOW, cancelKey })) rows.push(["panel", line.text, LINE_WIDTH]);
      const beside = promptLine({ view: v, now: NOW, cancelKey });
      if (beside) rows.push(["beside the prompt", beside.text, BESIDE_PROMPT]);
    }
  }
  for (const open of [undefined, 0, 1, 12]) rows.push(["countdown toast", countdownToastText(10, open), TOAST]);
  for (const said of Object.values(SAID)) rows.push(["TUI toast", said, TOAST]);
  // What the palette's Allow more granted, at its widest, and what it lifted.
  const widest = { continuations: 100_000, cost: 999.99, tokens: 999_000 };
  for (const line of allowedSaying(widest, ["budget_exhausted", "cost_budget"]).split("\n"))
    rows.push(["TUI toast: allowed", line, TOAST]);
  for (const [name, entry] of Object.entries(PALETTE)) {
    // Only the cancel entry can have a key bound (the cancelKey option).
    const width = name === "cancel" ? PALETTE_ROW - KEY_ROOM : PALETTE_ROW;
    rows.push([`palette ${name}`, `${entry.title} ${entry.desc}`, width]);
  }
  return rows;
}

const table = [...decisions(), ...drawn()].map(([where, text, width]) => ({ where, text, width }));

describe("every string a person sees fits where it is shown", () => {
  it.each(table)('$where: "$text" ($text.length of $width)', ({ text, width }) => {
    expect(text.length).toBeLessThanOrEqual(width);
  });

  it("the widths: a line of the panel, and so of a toast, fits the narrower of the two", () => {
    expect(LINE_WIDTH).toBeLessThan(SIDEBAR);
    expect(LINE_WIDTH).toBeLessThan(TOAST);
  });

  it("a count of one is singular", () => {
    const singular = table.filter(({ text }) => /\b1 (?!is\b)[a-z]+s\b/.test(text));
    expect(singular).toEqual([]);
    expect(countdownToastText(3, 1)).toBe("Resuming in 3s… (1 todo open)");
    // None open: the countdown is the one a failed check asked for.
    expect(countdownToastText(3, 0)).toBe("Resuming in 3s… (the check failed)");
  });
});
