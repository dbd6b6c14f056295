// How a session stands, in the page's words and colour: what moves it now (a countdown, a park, a check), what holds it
// (a stop, or something that needs the person: a question, a budget, stuck, an error), or nothing. The words of a
// hold and of the last decision are the toast's own (core/holds.ts, core/explain.ts). Pure.
import { explain } from "../core/explain.js";
import { heldOf } from "../core/holds.js";
import { SKIP_FACTS } from "../core/skip-reasons.js";
import type { SkipReason } from "../core/reasons.js";
import type { Explanation } from "../core/words.js";
import type { OverviewRow } from "../store/operator/overview.js";

export type PageState = "counting" | "parked" | "checking" | "stopped" | "needs" | "done" | "working";

export interface SessionState {
  state: PageState;
  /** The state in words: "needs you: a question" */
  label: string;
  /** The reason in the toast's words, when one holds it. */
  why?: Explanation;
  /** The way on, when the person must act. */
  goOn?: string;
  /** A countdown's deadline or a park's wake (epoch ms), for the page to count down to. */
  until?: number;
}

/** The kinds of notice that mean the person is needed (docs/notifications.md). */
const NEEDS_NOTICES = new Set(["question", "budget", "stuck", "error"]);

const noticeOf = (reason: string | null) =>
  reason && Object.hasOwn(SKIP_FACTS, reason) ? SKIP_FACTS[reason as SkipReason].notice : null;

export function sessionState(row: OverviewRow): SessionState {
  if (row.countdown) return { state: "counting", label: "counting down", until: row.countdown.deadlineAt };
  if (row.checking) return { state: "checking", label: `checking: ${row.checking.command}` };
  if (row.park) return { state: "parked", label: "parked", until: row.park.wakeAt };
  const held = heldOf(row);
  if (held?.reasons[0] === "stopped") return { state: "stopped", label: "stopped", why: held.why, goOn: held.goOn };
  if (held) return { state: "needs", label: needsLabel(held.reasons[0]!), why: held.why, goOn: held.goOn };
  const last = row.last;
  if (last?.event === "skipped" && noticeOf(last.reason) === "question")
    return { state: "needs", label: "needs you: a question", why: explain(last.event, last.reason, last.detail) };
  if (last?.event === "skipped" && noticeOf(last.reason) === "done")
    return { state: "done", label: "done", why: explain(last.event, last.reason, last.detail) };
  return { state: "working", label: "working" };
}

function needsLabel(reason: SkipReason): string {
  if (reason === "user_took_over") return "needs you: paused for you";
  const notice = SKIP_FACTS[reason].notice;
  return notice && NEEDS_NOTICES.has(notice) ? `needs you: ${notice === "error" ? "an error" : notice}` : "needs you";
}

/** The last decision in the toast's words, or its event and reason where no words are kept for it. */
export function decisionWords(last: OverviewRow["last"]): string {
  if (!last) return "no decision yet";
  const words = explain(last.event, last.reason, last.detail);
  return words ? words.text : [last.event, last.reason].filter(Boolean).join(": ");
}

/**
 * The todos as last counted (by the latest countdown or continuation): "2 of 3 done"; all of them once the session is
 * done, which the skip that says so counted.
 */
export function todoWords(row: OverviewRow, state: PageState): string {
  if (!row.todos) return state === "done" ? "every todo done" : "todos not counted yet";
  const { open, total } = row.todos;
  return `${state === "done" ? total : total - open} of ${total} done`;
}

/** The reasons the pictures count stops by: every skip that ends continuation and is told (parks wait, and are not). */
export const TOLD_STOP_REASONS: readonly SkipReason[] = (Object.keys(SKIP_FACTS) as SkipReason[]).filter((reason) => {
  const notice = SKIP_FACTS[reason].notice;
  return notice !== null && notice !== "waiting";
});
