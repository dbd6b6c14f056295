// The words every explanation is made of: how a session stands, the line width, amounts, counts and the ways on.
// Pure. The reasons' own words are in skip-reasons.ts and cancel-reasons.ts; explain.ts puts them together per row.
import type { StopSource } from "./reasons.js";

/** How the session stands after a decision: on its way, held for a while, needing the user, or finished. */
export type Standing = "continuing" | "waiting" | "paused" | "stopped" | "done" | "off";

export interface Explanation {
  standing: Standing;
  /** One line of at most LINE_WIDTH, lower case, no final stop: "stopped: 3 times without progress". */
  text: string;
  /** What the user can do about it, when something: one line of at most LINE_WIDTH. */
  hint?: string;
}

/**
 * The widest a line may be: the TUI's sidebar panel shows each in 37 columns (OpenCode 1.18.33's sidebar is 42 wide,
 * less its padding), and a toast shows 54 (at most 60 wide, less its border and padding). One column spare.
 */
export const LINE_WIDTH = 36;

export const RESUME_HINT = "/resume-continuation to go on";

/** The way back from a stop, named as the way the user stopped it (the palette costs no model turn). */
const RESUME_BY: { readonly [S in StopSource]: string } = {
  command: RESUME_HINT,
  api: RESUME_HINT,
  tui: "palette: Resume todo continuation",
  cli: "todo-continuation resume to go on",
  dashboard: "the page's Resume to go on",
};

/**
 * The commands that go on from a stop: more budget, a resume, the session itself (to answer, write or compact), or a
 * parked session's wake.
 */
export function goOnCommand(way: "allow" | "resume" | "open" | "wake", sessionId: string): string {
  return way === "open" ? `opencode --session ${sessionId}` : `todo-continuation ${way} ${sessionId}`;
}

/** The way on from a spent budget: more of it, from the palette (no model turn; the CLI's `allow` is the same). */
export const ALLOW_HINT = "palette: Allow more to go on";

const STOPPED_BY: { readonly [S in StopSource]: string } = {
  command: "stopped by /stop-continuation",
  api: "stopped",
  tui: "stopped from the palette",
  cli: "stopped from the command line",
  dashboard: "stopped from the page",
};

const isStopSource = (source: unknown): source is StopSource =>
  typeof source === "string" && Object.hasOwn(STOPPED_BY, source);

/** A durable stop, by who set it (an audit row's stop source, or a skip's `detail.stopSource`). */
export function stoppedBy(source: unknown): Explanation {
  return isStopSource(source)
    ? { standing: "stopped", text: STOPPED_BY[source], hint: RESUME_BY[source] }
    : { standing: "stopped", text: "stopped", hint: RESUME_HINT };
}

/** The number a decision's detail holds under `key`, if it holds one. */
export function numberIn(detail: Record<string, unknown>, key: string): number | undefined {
  const value = detail[key];
  return typeof value === "number" ? value : undefined;
}

/** An amount in the currency of the models' prices (OpenCode's are in US dollars): cents shown, at least. */
export function money(amount: number): string {
  if (amount >= 1e6) return `$${(amount / 1e6).toFixed(1)}M`;
  if (amount >= 1e4) return `$${Math.round(amount / 1e3)}k`;
  return `$${amount >= 1000 ? Math.round(amount) : amount.toFixed(amount < 0.1 && amount > 0 ? 3 : 2)}`;
}

/** 950, 41k, 3.2M. */
export function tokens(count: number): string {
  if (count >= 1e6) return `${(count / 1e6).toFixed(count >= 1e7 ? 0 : 1)}M`;
  if (count >= 1e4) return `${Math.round(count / 1e3)}k`;
  return String(Math.round(count));
}

/** "3 times", "1 time"; "times" when the count is not known. */
export function plural(count: number | undefined, word: string): string {
  return count === undefined ? `${word}s` : `${count} ${word}${count === 1 ? "" : "s"}`;
}

/** A wait, as a person reads it: "40 s", "12 min", "2 h 13 min", "3 d 4 h"; "now" for none left. */
export function duration(ms: number): string {
  const seconds = Math.ceil(ms / 1000);
  if (seconds <= 0) return "now";
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}
