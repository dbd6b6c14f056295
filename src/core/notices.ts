// The moments a person who left a session working needs to hear of, and what they are told: a notice. Which stops make
// one (a question, a budget, no progress, all done, an error given up on), and its body — the same words as the toast,
// the todos, what the continuations cost, and the way on. Pure: a decision's reason and detail and the session's
// counts in, a notice out. Delivered by the sender (engine/notice-sender.ts) through the channels (src/notices).
import { explain } from "./explain.js";
import { DEFAULT_NOTICE_KINDS, NOTICE_KINDS, type NoticeKind } from "./reasons.js";
import type { TodoSummary } from "./todos.js";
import { wayOnFrom } from "./holds.js";
import { ALLOW_LIFTS, RESUME_LIFTS, skipFactsOf } from "./skip-reasons.js";
import { goOnCommand, money } from "./words.js";

export { DEFAULT_NOTICE_KINDS, NOTICE_KINDS, type NoticeKind };

/** What each kind is for, in the words of the docs and `--help`. */
export const NOTICE_KIND_MEANING: Record<NoticeKind, string> = {
  question: "the assistant asked something (in text or with the question tool) or a permission is asked",
  budget: "a budget is spent (maxContinuations, a cost or token cap, the daily cap)",
  stuck:
    "no progress (stagnation, replies without work), continuations that failed were given up, or the `verify` check kept failing",
  done: "every todo is closed after continuations",
  error: "a provider error the enforcer will not retry",
  waiting: "a session parked until a limit lifts, a time comes or a check passes (only for channels that list it)",
};

/**
 * The kind of notice a skip makes, if any (its reason's, in skip-reasons.ts). `continued`: continuations went out
 * since the last real user message — all done is news only after the enforcer kept the session working; a list the
 * person watched close is not.
 */
export function noticeKindOf(reason: string, continued: boolean): NoticeKind | undefined {
  const kind = skipFactsOf(reason)?.notice ?? undefined;
  if (kind === "done" && !continued) return undefined;
  return kind;
}

/**
 * How a person goes on from a notice of `kind` told for `reason`: the palette entry and the command, both named, the
 * command the one `status` names for the same hold (holds.ts). A budget's: `allow` with no amount grants as much again
 * as the session had (store/changes/allow.ts); a full context is no stop a resume lifts: the person writes or compacts.
 */
export function wayOn(kind: NoticeKind, reason: string, sessionId: string): { palette: string; command: string } {
  if (kind === "question" || kind === "done")
    return { palette: "(answer in the session)", command: goOnCommand("open", sessionId) };
  if (kind === "waiting") return { palette: "Wake parked todo continuation", command: wayOnFrom([reason], sessionId) };
  const command = wayOnFrom([reason], sessionId);
  if (ALLOW_LIFTS.has(reason)) return { palette: "Allow more todo continuations", command };
  if (RESUME_LIFTS.has(reason)) return { palette: "Resume todo continuation", command };
  return { palette: "(compact or write in the session)", command };
}

/** One notice: the body every channel is made from, and the JSON a webhook or a command receives. */
export interface Notice {
  /** The body's format: a receiver checks it. */
  format: 1;
  /** Unique; the same in every channel's delivery (a receiver drops a repeat by it). */
  id: string;
  kind: NoticeKind;
  /** When the enforcer decided, ISO 8601 UTC. */
  at: string;
  /** The project folder. */
  directory: string;
  /** `url`: the session's page, where `dashboardUrl` is set (docs/dashboard.md). */
  session: { id: string; title?: string; url?: string };
  /** The audit reason of the stop (`audit_events.reason`): `waiting_for_user`, `cost_budget`… */
  reason: string;
  /** The same words as the toast: "Stopped: $0.003 of $0.003 today." */
  text: string;
  /** What the toast says to do, when it says something. */
  hint?: string;
  todos: { done: number; open: number; total: number };
  /** The continuations since the last real user message, and what they cost. */
  continuations: { count: number; cost: number; tokens: number };
  /** The exact way on: the TUI palette entry and the CLI command. */
  goOn: { palette: string; command: string };
  /** Earlier notices of the session this one stands for: the rate limit folded them into it. */
  folded?: Array<{ id: string; kind: NoticeKind; reason: string; text: string; at: string }>;
}

export interface NoticeFacts {
  id: string;
  now: number;
  directory: string;
  sessionId: string;
  title?: string;
  reason: string;
  detail: Record<string, unknown>;
  todos?: TodoSummary;
  continuations: { count: number; cost: number; tokens: number };
}

const sentence = (text: string) => `${text[0]!.toUpperCase()}${text.slice(1)}.`;

/** The notice a skip makes, or undefined when it makes none (see `noticeKindOf`). */
export function noticeOf(facts: NoticeFacts): Notice | undefined {
  const kind = noticeKindOf(facts.reason, facts.continuations.count > 0);
  if (!kind) return undefined;
  const words = explain("skipped", facts.reason, facts.detail);
  const text = words ? sentence(words.text) : sentence(facts.reason.replaceAll("_", " "));
  const todos = facts.todos ?? { total: 0, completed: 0, open: 0 };
  return {
    format: 1,
    id: facts.id,
    kind,
    at: new Date(facts.now).toISOString(),
    directory: facts.directory,
    session: { id: facts.sessionId, ...(facts.title ? { title: facts.title } : {}) },
    reason: facts.reason,
    text,
    ...(words?.hint ? { hint: sentence(words.hint) } : {}),
    todos: { done: todos.completed, open: todos.open, total: todos.total },
    continuations: facts.continuations,
    goOn: wayOn(kind, facts.reason, facts.sessionId),
  };
}

const KIND_TITLE: Record<NoticeKind, string> = {
  question: "needs an answer",
  budget: "budget spent",
  stuck: "stuck",
  done: "done",
  error: "stopped by an error",
  waiting: "waiting (parked)",
};

/** A short title for channels that show one: "my-project: needs an answer". */
export function noticeTitle(notice: Notice): string {
  const project = notice.directory.split(/[\\/]/).filter(Boolean).at(-1) ?? notice.directory;
  return `${project}: ${KIND_TITLE[notice.kind]}`;
}

/** The notice as a few lines of plain text, for channels that show text (ntfy, Slack, Discord, a desktop popup). */
export function noticeLines(notice: Notice): string[] {
  const { todos, continuations } = notice;
  const title = notice.session.title ? `${notice.session.title} (${notice.session.id})` : notice.session.id;
  const cost = continuations.cost > 0 ? `, ${money(continuations.cost)}` : "";
  const lines = [
    notice.text + (notice.hint ? ` ${notice.hint}` : ""),
    `Session ${title} in ${notice.directory}`,
    `Todos: ${todos.done} done, ${todos.open} open. Continuations: ${continuations.count}${cost}.`,
    `Go on: ${notice.goOn.command}` + (notice.goOn.palette.startsWith("(") ? "" : ` (palette: ${notice.goOn.palette})`),
  ];
  if (notice.session.url) lines.push(`Its page: ${notice.session.url}`);
  if (notice.folded?.length) lines.push(`Also since the last notice: ${notice.folded.map((f) => f.text).join(" ")}`);
  return lines;
}

/** The session's page under the page's address (`dashboardUrl`). */
export function sessionPageUrl(dashboardUrl: string, sessionId: string): string {
  return `${dashboardUrl}/session/${encodeURIComponent(sessionId)}`;
}
