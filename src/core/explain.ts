// A decision in words, for people: the toast that says why continuation stopped, and the TUI panel's last line.
// Pure: the audit row's event, reason and detail in, a short sentence out.

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

/** The way back from a stop, named as the way the user stopped it (the palette costs no model turn). */
const RESUME_BY: Record<string, string> = {
  tui: "palette: Resume todo continuation",
  cli: "todo-continuation resume to go on",
};
const RESUME_HINT = "/resume-continuation to go on";
const resumeHint = (source: unknown) => RESUME_BY[String(source)] ?? RESUME_HINT;

/** The way on from a spent budget: more of it, from the palette (no model turn; the CLI's `allow` is the same). */
const ALLOW_HINT = "palette: Allow more to go on";

const STOPPED_BY: Record<string, string> = {
  command: "stopped by /stop-continuation",
  tui: "stopped from the palette",
  cli: "stopped from the command line",
};

function stoppedBy(source: unknown): Explanation {
  return { standing: "stopped", text: STOPPED_BY[String(source)] ?? "stopped", hint: resumeHint(source) };
}

function n(detail: Record<string, unknown>, key: string): number | undefined {
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

function plural(count: number | undefined, word: string): string {
  return count === undefined ? `${word}s` : `${count} ${word}${count === 1 ? "" : "s"}`;
}

const SKIPS: Record<string, (detail: Record<string, unknown>) => Explanation> = {
  disabled: () => ({ standing: "off", text: "off: the enforcer is disabled" }),
  session_filtered: () => ({ standing: "off", text: "not continued: a subagent's session" }),
  stopped: (d) => stoppedBy(d.stopSource),
  user_key: () => ({ standing: "paused", text: "cancelled by you" }),
  recovering: () => ({ standing: "waiting", text: "waiting: OpenCode is retrying" }),
  aborted: () => ({ standing: "waiting", text: "waiting: you aborted the last turn" }),
  token_limit: () => ({ standing: "stopped", text: "stopped: the context is full", hint: "compact or write to go on" }),
  provider_error: (d) => ({
    standing: "stopped",
    text: `stopped: the provider refused${n(d, "statusCode") ? ` (${n(d, "statusCode")})` : ""}`,
    hint: "fix it, then /resume-continuation",
  }),
  errors_persist: (d) => ({
    standing: "stopped",
    text: `stopped: ${plural(n(d, "errors"), "provider error")} in a row`,
    hint: RESUME_HINT,
  }),
  gave_up: (d) => ({
    standing: "stopped",
    text: `stopped: sending failed ${plural(n(d, "failures"), "time")}`,
    hint: RESUME_HINT,
  }),
  error_cooldown: () => ({ standing: "waiting", text: "waiting: after a provider error" }),
  backoff: () => ({ standing: "waiting", text: "waiting: retrying the continuation" }),
  in_flight: () => ({ standing: "continuing", text: "a continuation is on its way" }),
  busy: () => ({ standing: "continuing", text: "working" }),
  children_running: (d) => ({
    standing: "waiting",
    text: `waiting: ${plural(n(d, "busyChildren"), "subagent")} still working`,
  }),
  waiting_for_user: (d) => ({
    standing: "waiting",
    text: d.source === "request" ? "waiting: a request needs you" : "waiting: the assistant asked you",
  }),
  compaction: (d) => ({
    standing: "waiting",
    text: d.state === "running" ? "waiting: a compaction is running" : "waiting: compacted; write to go on",
  }),
  agent_skipped: (d) => ({ standing: "off", text: `not continued: agent ${String(d.agent ?? "")}`.trimEnd() }),
  no_write_permission: (d) => ({
    standing: "off",
    text: d.agent ? `not continued: ${String(d.agent)} is read-only` : "not continued: a read-only agent",
  }),
  todo_fetch_failed: (d) =>
    d.final === true
      ? {
          standing: "waiting",
          text: `could not read the todos (${plural(n(d, "attempt"), "time")})`,
          hint: "looks again at the next idle",
        }
      : {
          standing: "waiting",
          text:
            n(d, "retryInMs") !== undefined
              ? `could not read todos; retry in ${Math.ceil(n(d, "retryInMs")! / 1000)} s`
              : "could not read the todos",
        },
  no_todos: () => ({ standing: "done", text: "no todos" }),
  todos_complete: () => ({ standing: "done", text: "done: every todo is closed" }),
  user_took_over: () => ({
    standing: "paused",
    text: "paused: you stepped in",
    hint: "move a todo or /resume-continuation",
  }),
  no_progress_reply: (d) => ({
    standing: "stopped",
    text: `stopped: ${plural(n(d, "textOnlyReplies"), "reply")} without work`,
    hint: RESUME_HINT,
  }),
  stagnation: (d) => ({
    standing: "stopped",
    text:
      d.work === "files"
        ? `stopped: ${plural(n(d, "workContinuations"), "turn")} of work, no todo`
        : `stopped: ${plural(n(d, "unproductiveContinuations"), "time")} without progress`,
    hint: RESUME_HINT,
  }),
  cost_budget: (d) => {
    const spent = n(d, "spent") ?? 0;
    const limit = n(d, "limit") ?? 0;
    if (d.budget === "session_tokens")
      return { standing: "stopped", text: `stopped: ${tokens(spent)} of ${tokens(limit)} tokens`, hint: ALLOW_HINT };
    // An allowance lets this session past the day's cap; raising dailyContinuationCost lets every session.
    if (d.budget === "daily_cost")
      return { standing: "stopped", text: `stopped: ${money(spent)} of ${money(limit)} today`, hint: ALLOW_HINT };
    return { standing: "stopped", text: `stopped: ${money(spent)} of ${money(limit)} spent`, hint: ALLOW_HINT };
  },
  budget_exhausted: (d) => ({
    standing: "stopped",
    text: `stopped: the budget${n(d, "continuations") !== undefined ? ` of ${n(d, "continuations")}` : ""} is spent`,
    // What those continuations cost, when they were billed: the amount beside the way on.
    hint: n(d, "spent") ? `${money(n(d, "spent")!)} spent; palette: Allow more` : ALLOW_HINT,
  }),
};

const CANCELS: Record<string, string> = {
  user_key: "cancelled by you",
  user_message: "cancelled: you wrote",
  assistant_activity: "cancelled: the assistant went on",
  tool_activity: "cancelled: a tool ran",
  session_error: "cancelled: an error",
  session_deleted: "cancelled: the session was deleted",
  superseded: "replaced by a newer countdown",
  busy: "cancelled: the session went on",
  recovering: "cancelled: OpenCode is retrying",
  stopped: "cancelled: stopped",
};

/** A continuation after a turn that changed files and closed no todo: the work seen, and how long it may go on. */
function working(detail: Record<string, unknown>): Explanation | undefined {
  const progress = detail.progress as Record<string, unknown> | undefined;
  const work = detail.work as Record<string, unknown> | undefined;
  if (progress?.counted !== "files" || !work) return undefined;
  return {
    standing: "continuing",
    text: `working: ${plural(n(progress, "filesChanged"), "file")} changed`,
    hint: `no todo closed yet (${n(work, "continuations") ?? "?"} of ${n(work, "limit") ?? "?"})`,
  };
}

/** The words for one audit row; undefined for rows that change nothing a person needs to see. */
export function explain(
  event: string,
  reason: string | null,
  detail: Record<string, unknown> = {},
): Explanation | undefined {
  switch (event) {
    case "armed":
    case "resumed":
      return working(detail) ?? { standing: "continuing", text: "continuing soon" };
    case "fired":
    case "injected":
    case "reconciled":
      return working(detail) ?? { standing: "continuing", text: "continued" };
    case "skipped":
      return reason ? SKIPS[reason]?.(detail) : undefined;
    case "cancelled":
      return reason
        ? { standing: reason === "user_key" ? "paused" : "waiting", text: CANCELS[reason] ?? `cancelled: ${reason}` }
        : undefined;
    case "injection_failed":
      return reason === "gave_up" || detail.final === true
        ? {
            standing: "stopped",
            text: `stopped: sending failed ${plural(n(detail, "attempt"), "time")}`,
            hint: RESUME_HINT,
          }
        : { standing: "waiting", text: "a continuation failed; retrying" };
    case "expired":
      return { standing: "waiting", text: "expired: OpenCode was down too long" };
    case "stopped":
      return stoppedBy(reason);
    case "unstopped":
      return { standing: "continuing", text: detail.allowed ? "more allowed" : "resumed" };
    default:
      return undefined;
  }
}

/** A hold a resume lifted, in words: what the CLI prints and the TUI's toast says. */
const HOLDS: Record<string, string> = {
  stopped: "the stop",
  user_took_over: "the pause after you stepped in",
  provider_error: "the provider's refusal",
  gave_up: "the failed sends",
  errors_persist: "the provider errors",
  no_progress_reply: "the replies without work",
  stagnation: "the stop for no progress",
  budget_exhausted: "the spent budget",
  cost_budget: "the spent cost budget",
};

/** "a, b and c"; undefined for none. */
function listed(words: readonly string[]): string | undefined {
  if (words.length === 0) return undefined;
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(", ")} and ${words.at(-1)}`;
}

/** "the stop and the provider's refusal"; undefined when nothing was lifted. */
export function liftedWords(lifted: readonly string[]): string | undefined {
  return listed(lifted.map((reason) => HOLDS[reason] ?? reason.replaceAll("_", " ")));
}

/** "10 more continuations, $0.42 and 9000 tokens", "$0.25 more": what an allowance granted, the amounts it has. */
export function allowedWords(granted: { continuations: number; cost: number; tokens: number }): string {
  const amounts = [
    ...(granted.cost > 0 ? [money(granted.cost)] : []),
    ...(granted.tokens > 0 ? [`${tokens(granted.tokens)} tokens`] : []),
  ];
  if (granted.continuations > 0) return listed([plural(granted.continuations, "more continuation"), ...amounts])!;
  return amounts.length > 0 ? `${listed(amounts)} more` : "nothing more";
}

/**
 * The skips after which continuation has ended until someone acts: the user is told once (a toast), not at every
 * idle. Waiting states (a question, sub-sessions, a cooldown) end by themselves and are not announced.
 */
export const STOP_NOTICES: ReadonlySet<string> = new Set([
  "stopped",
  "token_limit",
  "provider_error",
  "errors_persist",
  "user_took_over",
  "no_progress_reply",
  "stagnation",
  "cost_budget",
  "budget_exhausted",
  "gave_up",
]);
