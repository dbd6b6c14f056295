// What the TUI says of one session, from what the database holds and the time: the sidebar panel's lines, and the one
// line beside the prompt that shows a countdown where no panel is drawn. Pure: the TUI plugin renders these; the words
// for a decision come from core/explain.ts, like the server's stop toast.
import { explain } from "../core/explain.js";
import { money, tokens } from "../core/words.js";
import type { ParkReason } from "../core/reasons.js";
import type { SessionView } from "../store/operator/session-view.js";

export type Tone = "title" | "normal" | "active" | "warning" | "muted";

export interface PanelLine {
  text: string;
  tone: Tone;
}

export interface PanelInput {
  /** The session in view, or why the database cannot be read (one line, never a dialog). */
  view: SessionView | { problem: string };
  now: number;
  /** How the cancel key is named to the user: "esc", "ctrl+y". */
  cancelKey: string;
  /** What the plugins have to say about themselves ("off: invalid configuration"), shown under the title. */
  notice?: string;
}

export const PANEL_TITLE = "Todo continuation";

function countdownLine(deadlineAt: number, now: number, cancelKey: string): PanelLine {
  const seconds = Math.ceil((deadlineAt - now) / 1000);
  return { text: seconds > 0 ? `continuing in ${seconds}s · ${cancelKey} cancels` : "continuing now…", tone: "active" };
}

const PARKED_FOR: { readonly [R in ParkReason]: string } = {
  limit: "the limit resets",
  opencode_retry: "OpenCode retries",
  agent: "as asked",
};

/** "parked until 15:04" (the day too when not today): a wait of hours, said as a clock time. */
function parkedUntil(park: NonNullable<SessionView["park"]>, now: number): string {
  const at = new Date(park.wakeAt);
  const sameDay = at.toDateString() === new Date(now).toDateString();
  const clock = new Intl.DateTimeFormat(undefined, {
    hour: "2-digit",
    minute: "2-digit",
    ...(sameDay ? {} : { weekday: "short" }),
  }).format(at);
  return `parked until ${clock}`;
}

/** The park's lines in the panel: until when, why, and the key that ends it (each fits the sidebar's width). */
function parkLines(park: NonNullable<SessionView["park"]>, now: number, cancelKey: string): PanelLine[] {
  const why = park.checkCommand !== null ? "or when its check passes" : PARKED_FOR[park.reason];
  return [
    { text: parkedUntil(park, now), tone: "active" },
    { text: why, tone: "normal" },
    { text: `${cancelKey} ends the wait`, tone: "muted" },
  ];
}

/** "checking: npm test · 12s": the `verify` command running on the finished list, and for how long. */
function checkingText(checking: NonNullable<SessionView["checking"]>, now: number, command = true): string {
  const seconds = Math.max(0, Math.floor((now - checking.startedAt) / 1000));
  return `checking${command ? `: ${checking.command}` : ""} · ${seconds}s`;
}

/** The check's lines in the panel: the command and its time, and the key that cancels it (and the continuation). */
function checkingLines(checking: NonNullable<SessionView["checking"]>, now: number, cancelKey: string): PanelLine[] {
  const text = checkingText(checking, now);
  return [
    { text: text.length <= PANEL_WIDTH ? text : checkingText(checking, now, false), tone: "active" },
    { text: `${cancelKey} cancels`, tone: "muted" },
  ];
}

/** What fits on a line of the sidebar. */
const PANEL_WIDTH = 38;

/** Beside the prompt, where one short line fits: until when, and the key when it fits too. */
const BESIDE_PROMPT_WIDTH = 36;

/**
 * Beside the prompt: the countdown while one runs, the check while one runs, or the park while one holds, else nothing
 * (the row is OpenCode's).
 */
export function promptLine({ view, now, cancelKey }: PanelInput): PanelLine | undefined {
  if ("problem" in view) return undefined;
  if (view.countdown) return countdownLine(view.countdown.deadlineAt, now, cancelKey);
  if (view.checking) {
    const fits = [checkingText(view.checking, now), checkingText(view.checking, now, false)]
      .map((text) => `${text} · ${cancelKey} cancels`)
      .find((text) => text.length <= BESIDE_PROMPT_WIDTH);
    return { text: fits ?? checkingText(view.checking, now, false), tone: "active" };
  }
  if (!view.park || view.stoppedAt !== null) return undefined;
  const until = parkedUntil(view.park, now);
  const withKey = `${until} · ${cancelKey} cancels`;
  return { text: withKey.length <= BESIDE_PROMPT_WIDTH ? withKey : until, tone: "active" };
}

function budgetLine(view: SessionView): PanelLine {
  const used = view.continuations;
  return {
    text:
      view.maxContinuations === null
        ? `${used} continuation${used === 1 ? "" : "s"} sent`
        : `${used} of ${view.maxContinuations} continuations`,
    tone: "muted",
  };
}

/**
 * "41k tokens · $0.12 of $1.00": what the continuations cost, once they used anything. A model without a price (a local
 * one) costs 0 whatever it does: the line says so, and that a cost budget cannot stop it.
 */
function spendLine(view: SessionView): PanelLine | undefined {
  const { cost, tokens: used } = view.spent;
  if (used <= 0 && cost <= 0) return undefined;
  if (cost <= 0)
    return { text: `${tokens(used)} tokens · no price${view.maxCost !== null ? ", no cost cap" : ""}`, tone: "muted" };
  const budget = view.maxCost !== null ? ` of ${money(view.maxCost)}` : "";
  return { text: `${tokens(used)} tokens · ${money(cost)}${budget}`, tone: "muted" };
}

export function panelLines(input: PanelInput): PanelLine[] {
  const lines = sessionLines(input);
  if (!input.notice) return lines;
  return [
    lines[0]!,
    { text: input.notice, tone: "warning" },
    { text: "todo-continuation doctor says why", tone: "muted" },
    ...lines.slice(1),
  ];
}

function sessionLines({ view, now, cancelKey }: PanelInput): PanelLine[] {
  const title: PanelLine = { text: PANEL_TITLE, tone: "title" };
  if ("problem" in view) return [title, { text: `unavailable: ${view.problem}`, tone: "muted" }];
  const spend = spendLine(view);
  if (view.countdown)
    return [
      title,
      countdownLine(view.countdown.deadlineAt, now, cancelKey),
      budgetLine(view),
      ...(spend ? [spend] : []),
    ];
  if (view.checking)
    return [title, ...checkingLines(view.checking, now, cancelKey), budgetLine(view), ...(spend ? [spend] : [])];
  if (view.stoppedAt !== null) {
    const stopped = explain("stopped", view.stopSource)!;
    return [title, { text: stopped.text, tone: "warning" }, { text: stopped.hint!, tone: "muted" }];
  }
  const counted = view.continuations > 0 || view.maxContinuations !== null ? [budgetLine(view)] : [];
  if (view.park) return [title, ...parkLines(view.park, now, cancelKey), ...counted, ...(spend ? [spend] : [])];
  const last = view.lastDecision
    ? explain(view.lastDecision.event, view.lastDecision.reason, view.lastDecision.detail)
    : undefined;
  // A pause holds until the session moves: it is the state, whatever was decided last (a cancel, a skip).
  const decision =
    view.pausedAt !== null && last?.standing !== "continuing" ? explain("skipped", "user_took_over") : last;
  if (!decision) return [title, { text: "watching", tone: "muted" }];
  const tone: Tone =
    decision.standing === "stopped" || decision.standing === "paused"
      ? "warning"
      : decision.standing === "continuing"
        ? "active"
        : "normal";
  const lines: PanelLine[] = [title, { text: decision.text, tone }];
  if (decision.hint) lines.push({ text: decision.hint, tone: "muted" });
  lines.push(...counted);
  if (spend) lines.push(spend);
  return lines;
}
