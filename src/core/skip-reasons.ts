// Each skip reason once, keyed by the reason: what a person is told of it (the toast, the TUI panel, the CLI, a
// notice), the notice it makes, whether it is a stop told once and what a resume lifting it is called, and its row of
// the guard table in docs/how-it-decides.md (written by `npm run docs:reasons`). A reason added to SKIP_REASONS
// (reasons.ts, where the order the guards run is) without its entry here, or without its guard in decide.ts, fails
// the type check. Pure.
import type { NoticeKind, SkipReason } from "./reasons.js";
import {
  ALLOW_HINT,
  duration,
  type Explanation,
  money,
  numberIn,
  plural,
  RESUME_HINT,
  stoppedBy,
  tokens,
} from "./words.js";

export interface SkipFacts {
  /** The words for a skip with this reason and detail. */
  words: (detail: Record<string, unknown>) => Explanation;
  /** The kind of notice it makes (docs/notifications.md), or none; `done` only after continuations (notices.ts). */
  notice: NoticeKind | null;
  /**
   * A stop: continuation has ended until someone acts, and the user is told once (a toast), not at every idle; waiting
   * states end by themselves and are none. `lifted`: what a resume that lifted it calls it, or null when a resume does
   * not lift it (the way out is another: write, or compact).
   */
  stop: { lifted: string | null } | null;
  /** Its row of the guard table: when it says no, and what happens then (Markdown). */
  when: string;
  /** The options that change it, in its row of the guard table. */
  options: readonly string[];
}

export const SKIP_FACTS: { readonly [R in SkipReason]: SkipFacts } = {
  disabled: {
    words: () => ({ standing: "off", text: "off: the enforcer is disabled" }),
    notice: null,
    stop: null,
    when: "the enforcer is switched off (decisions are still audited)",
    options: ["enabled"],
  },
  session_filtered: {
    words: () => ({ standing: "off", text: "not continued: a subagent's session" }),
    notice: null,
    stop: null,
    when: "a child (subagent) session while `continueChildSessions` is off: a subagent whose own session went idle has handed its result to its parent, so it is never continued",
    options: ["continueChildSessions"],
  },
  stopped: {
    words: (d) => stoppedBy(d.stopSource),
    notice: null,
    stop: { lifted: "the stop" },
    when: "a durable stop is set on the session: nothing more until resumed, across restarts and new messages (see [Stop, pause and resume](#stop-pause-and-resume))",
    options: [],
  },
  user_key: {
    words: () => ({ standing: "paused", text: "cancelled by you" }),
    notice: null,
    stop: null,
    when: "you cancelled this idle's countdown with the key while another process was still reading OpenCode about the same idle (OpenCode may load the plugin twice; a service may follow the server too): that look yields to you (`detail.cancelledAt`)",
    options: [],
  },
  parked: {
    words: (d) => parkedWords(d.park, numberIn(d, "wakesInMs")),
    notice: "waiting",
    stop: null,
    when: "the session is parked: until a provider's rate or usage limit lifts (the time it names, else a backoff of 2 minutes doubling to an hour; plus the session's stagger), while OpenCode waits to retry (a wait of 15 s or more), or until the time or check the agent asked for with `continue_later`. Nothing until it wakes (into a normal countdown), a person writes, or it is ended (`detail.park`, `detail.until`)",
    options: [],
  },
  recovering: {
    words: () => ({ standing: "waiting", text: "waiting: OpenCode is retrying" }),
    notice: null,
    stop: null,
    when: "status `retry` (OpenCode is retrying the provider itself), or marked recovering through the [API](programmatic-api.md)",
    options: [],
  },
  aborted: {
    words: () => ({ standing: "waiting", text: "waiting: you aborted the last turn" }),
    notice: null,
    stop: null,
    when: "you aborted the last turn (Esc: a `MessageAbortedError`, in `session.error` or in the last assistant message) and nothing happened since: nothing until you or the assistant act again",
    options: [],
  },
  token_limit: {
    words: () => ({ standing: "stopped", text: "stopped: the context is full", hint: "compact or write to go on" }),
    notice: "error",
    stop: { lifted: null },
    when: "a context/token-limit error (the context is full) and no real user message or compaction since: stops until you write or a compaction ran",
    options: [],
  },
  provider_error: {
    words: (d) => ({
      standing: "stopped",
      text: `stopped: the provider refused${numberIn(d, "statusCode") ? ` (${numberIn(d, "statusCode")})` : ""}`,
      hint: "fix it, then /resume-continuation",
    }),
    notice: "error",
    stop: { lifted: "the provider's refusal" },
    when: "the last turn failed with an error retrying cannot fix: 400, 401, 403, an unknown model or agent, a limit only paying lifts (no credit, billing), or a run of provider limits parked longer than `maxParkHours` (`errorName: LimitWaitedTooLong`) (`detail`: status and message). No retry: stops until you write, or fix it and resume (a resume lifts the refusal the session's messages still show; a new one after it holds again). An error seen only in `session.error` events (OpenCode refused a continuation after accepting it, and wrote no message) holds until the messages show a turn that ended well after it",
    options: [],
  },
  errors_persist: {
    words: (d) => ({
      standing: "stopped",
      text: `stopped: ${plural(numberIn(d, "errors"), "provider error")} in a row`,
      hint: RESUME_HINT,
    }),
    notice: "error",
    stop: { lifted: "the provider errors" },
    when: "the last turn failed with a transient provider error (5xx, overloaded, network; after OpenCode's own retries) for the `maxRetries`+1-th time in a row. Before that, each such error makes the enforcer look again when a cooldown ends (`errorCooldownMs`, doubled per error in a row, capped at `retryMaxMs`, or the provider's `retry-after` if longer): `armed` with `detail.waitingFor: \"error_cooldown\"`. A turn that ends well resets the count",
    options: ["errorCooldownMs", "maxRetries"],
  },
  gave_up: {
    words: (d) => ({
      standing: "stopped",
      text: `stopped: sending failed ${plural(numberIn(d, "failures"), "time")}`,
      hint: RESUME_HINT,
    }),
    notice: "stuck",
    stop: { lifted: "the failed sends" },
    when: "the last `maxRetries`+1 attempts to send a continuation in a row failed (failed, outcome unknown, never started; also calls that never reached OpenCode): no attempt at any later idle, in any process, after a restart, until a real user message, a resume, or a continuation's turn seen starting (`detail`: `failures`, `limit`; see [Delivery](#delivery))",
    options: ["maxRetries", "retryBaseMs", "retryMaxMs"],
  },
  error_cooldown: {
    words: () => ({ standing: "waiting", text: "waiting: after a provider error" }),
    notice: null,
    stop: null,
    when: "a countdown that ends before a transient error's cooldown does (a new idle waits for the cooldown instead)",
    options: ["errorCooldownMs"],
  },
  backoff: {
    words: () => ({ standing: "waiting", text: "waiting: retrying the continuation" }),
    notice: null,
    stop: null,
    when: "a countdown that ends before a failed prompt's backoff does (a new idle waits for the backoff instead)",
    options: ["retryBaseMs", "retryMaxMs"],
  },
  in_flight: {
    words: () => ({ standing: "continuing", text: "a continuation is on its way" }),
    notice: null,
    stop: null,
    when: "a continuation for the session is already queued or in flight (or one thought lost turned out to have arrived: `detail.delivered`, or the last one's outcome is unknown and the session's messages cannot be read to look for it: `detail.awaiting`, see [Delivery](#delivery)), or one was sent (by any process) after the idle this look judges, which it answered (`detail.answeredBy`, `detail.firedAt`): the session's next idle is looked at on its own. Also when the session's last message is our last continuation, nothing answered it yet, and OpenCode's status cannot be read (`detail.unanswered`, `detail.status: \"unread\"`): its turn is running or never started, and only the status tells which (one that never started is found by the start check, and retried)",
    options: [],
  },
  busy: {
    words: () => ({ standing: "continuing", text: "working" }),
    notice: null,
    stop: null,
    when: "the session is busy again",
    options: [],
  },
  children_running: {
    words: (d) => ({
      standing: "waiting",
      text: `waiting: ${plural(numberIn(d, "busyChildren"), "subagent")} still working`,
    }),
    notice: null,
    stop: null,
    when: 'a sub-session at any depth (child, grandchild…) is busy (`detail.sessions`): it waits; when the last busy one finishes, the parent is looked at again at once (`armed` with `detail.trigger: "children_done"`)',
    options: [],
  },
  waiting_for_user: {
    words: (d) => ({
      standing: "waiting",
      text: d.source === "request" ? "waiting: a request needs you" : "waiting: the assistant asked you",
    }),
    notice: "question",
    stop: null,
    when: 'a question or permission request is pending (`detail.source: "request"`), a question tool call is unfinished (`"question_tool"`: OpenCode\'s `question`, also other agents\' names such as `ask_user_question`), or the last assistant message asks you something in plain text (`"text_question"`, with `detail.question`; see [Questions in plain text](#questions-in-plain-text)): it waits for you, and after your answer it continues (your answer is not taken for stepping in)',
    options: ["detectTextQuestions"],
  },
  compaction: {
    words: (d) => ({
      standing: "waiting",
      text: d.state === "running" ? "waiting: a compaction is running" : "waiting: compacted; write to go on",
    }),
    notice: null,
    stop: null,
    when: 'a compaction is running (`detail.state: "running"`), or one finished and nothing real happened since (`"finished"`): it waits for the next real activity (yours, or the assistant going on by itself)',
    options: ["continueAfterCompaction"],
  },
  agent_skipped: {
    words: (d) => ({ standing: "off", text: `not continued: agent ${String(d.agent ?? "")}`.trimEnd() }),
    notice: null,
    stop: null,
    when: "the agent is in `skipAgents`",
    options: ["skipAgents"],
  },
  no_write_permission: {
    words: (d) => ({
      standing: "off",
      text: d.agent ? `not continued: ${String(d.agent)} is read-only` : "not continued: a read-only agent",
    }),
    notice: null,
    stop: null,
    when: "the agent cannot edit or write files (its last matching `edit` rule denies `*`)",
    options: [],
  },
  todo_fetch_failed: {
    words: (d) =>
      d.final === true
        ? {
            standing: "waiting",
            text: `could not read the todos (${plural(numberIn(d, "attempt"), "time")})`,
            hint: "looks again at the next idle",
          }
        : {
            standing: "waiting",
            text:
              numberIn(d, "retryInMs") !== undefined
                ? `could not read todos; retry in ${Math.ceil(numberIn(d, "retryInMs")! / 1000)} s`
                : "could not read the todos",
          },
    notice: null,
    stop: null,
    when: 'the todo list could not be read (OpenCode slow, down, an error; at the idle or right before the prompt): nothing is sent without the list. It looks again after a backoff (durable: a restart keeps it), up to `maxRetries` times in a row, then at the next idle; a read that answers ends the run (`detail`: the error, `attempt`, and `retryInMs` or, on the last, `final`; the retry is `armed` with `detail.trigger: "recheck"`)',
    options: ["hostTimeoutMs", "maxRetries", "retryBaseMs", "retryMaxMs"],
  },
  no_todos: {
    words: () => ({ standing: "done", text: "no todos" }),
    notice: null,
    stop: null,
    when: "the todo list is empty: nothing",
    options: [],
  },
  verify_failed: {
    words: (d) => ({
      standing: "stopped",
      text:
        d.repeated === true
          ? `stopped: the check failed the same way twice`
          : `stopped: the check failed ${plural(numberIn(d, "failures"), "time")}`,
      hint: RESUME_HINT,
    }),
    notice: "stuck",
    stop: { lifted: "the stop after failed checks" },
    when: "every todo is closed but the `verify` command kept failing: `maxRuns` failed runs since your last message (`detail.failures`, `limit`), or a run that printed what the run before it printed with no file changed between them (`detail.repeated`); with the command, its exit code and its last lines",
    options: ["verify"],
  },
  todos_complete: {
    words: (d) => ({
      standing: "done",
      text: d.verified ? `done, checked: ${checkedLine(d.verified)}` : "done: every todo is closed",
    }),
    notice: "done",
    stop: null,
    when: 'no todo is open (open = not `completed`, `cancelled`, `blocked`, `deleted`): nothing. With `verify`, after continuations, only once its command passed (`detail.verified`: the command and how long it took). Also what an idle\'s first check says instead of a budget stop (`cost_budget`, `budget_exhausted`) when the list last reported has every todo closed — the last continuation finished it (`detail.reported: true`), and a [notice](notifications.md) says "done", not "budget"',
    options: [],
  },
  user_took_over: {
    words: () => ({
      standing: "paused",
      text: "paused: you stepped in",
      hint: "move a todo or /resume-continuation",
    }),
    notice: null,
    stop: { lifted: "the pause after you stepped in" },
    when: 'you stepped in after a continuation ("Stop. Let me look at the parser first."): a real user message followed one of our continuations while todos were open, and since then the todos made no progress and the list was not rewritten (`detail`: `messageId`, `pausedAt`). The session is paused, across restarts, until its todos progress, its list is rewritten, your message turns out to answer a question the assistant asked, or you resume (`armed` with `detail.pauseLifted`: `progress`, `rewritten`, `answered_question`). Your first message in a session never continued, and new work given once every todo was done, keep the usual behaviour',
    options: ["pauseAfterUserMessage"],
  },
  no_progress_reply: {
    words: (d) => ({
      standing: "stopped",
      text: `stopped: ${plural(numberIn(d, "textOnlyReplies"), "reply")} without work`,
      hint: RESUME_HINT,
    }),
    notice: "stuck",
    stop: { lifted: "the replies without work" },
    when: '`unproductiveLimit` continuations in a row were answered with text only (no tool call, no edit; "All done!") while the todos made no progress. A retry of a continuation that never arrived (its call failed or timed out, or it was lost with its process) is judged on the streaks that continuation was sent with: the reply before it is not counted twice',
    options: ["unproductiveLimit"],
  },
  stagnation: {
    words: (d) => ({
      standing: "stopped",
      text:
        d.work === "files"
          ? `stopped: ${plural(numberIn(d, "workContinuations"), "turn")} of work, no todo`
          : `stopped: ${plural(numberIn(d, "unproductiveContinuations"), "time")} without progress`,
      hint: RESUME_HINT,
    }),
    notice: "stuck",
    stop: { lifted: "the stop for no progress" },
    when: 'since the todos last made [progress](#progress-and-work), `stagnationLimit` continuations whose turns did no work (no todo moved, no file changed: commands run, files read, files written back, statuses toggled), or `workWithoutProgressLimit` whose turns changed files (`detail.work: "files"`, `workContinuations`, `limit`, `filesChanged`)',
    options: ["stagnationLimit", "workWithoutProgressLimit"],
  },
  cost_budget: {
    words: (d) => {
      const spent = numberIn(d, "spent") ?? 0;
      const limit = numberIn(d, "limit") ?? 0;
      if (d.budget === "session_tokens")
        return { standing: "stopped", text: `stopped: ${tokens(spent)} of ${tokens(limit)} tokens`, hint: ALLOW_HINT };
      // An allowance lets this session past the day's cap; raising dailyContinuationCost lets every session.
      if (d.budget === "daily_cost")
        return { standing: "stopped", text: `stopped: ${money(spent)} of ${money(limit)} today`, hint: ALLOW_HINT };
      return { standing: "stopped", text: `stopped: ${money(spent)} of ${money(limit)} spent`, hint: ALLOW_HINT };
    },
    notice: "budget",
    stop: { lifted: "the spent cost budget" },
    when: "a spend budget is spent — money or tokens per session since your last message, or money per UTC day for the whole database (a fleet shares it) — or the median of this session's last five continuations would take it past (for the daily cap, a session with none yet is estimated by today's last five of the database): it stops before the one that would likely overrun, and says what was spent (`detail`: `budget` — `session_cost`, `session_tokens` or `daily_cost` —, `spent`, `limit` (with what was [allowed](#allow-more) beyond the cap, also in `allowed`), `window`, `estimate`). [Allow more](#allow-more) to go on, or resume (the counts start over); the daily cap lifts at midnight UTC",
    options: ["maxContinuationCost", "maxContinuationTokens", "dailyContinuationCost"],
  },
  budget_exhausted: {
    words: (d) => ({
      standing: "stopped",
      text: `stopped: the budget${numberIn(d, "continuations") !== undefined ? ` of ${numberIn(d, "continuations")}` : ""} is spent`,
      // What those continuations cost, when they were billed: the amount beside the way on.
      hint: numberIn(d, "spent") ? `${money(numberIn(d, "spent")!)} spent; palette: Allow more` : ALLOW_HINT,
    }),
    notice: "budget",
    stop: { lifted: "the spent budget" },
    when: "`maxContinuations` continuations since the last real user message, plus those [allowed](#allow-more) since (`detail`: `continuations`, `limit`, `allowed`)",
    options: ["maxContinuations"],
  },
};

/** The facts of an audit row's reason, if it is a skip reason (rows and notices carry it as a plain string). */
export function skipFactsOf(reason: string): SkipFacts | undefined {
  return Object.hasOwn(SKIP_FACTS, reason) ? SKIP_FACTS[reason as SkipReason] : undefined;
}

const reasonsWhere = (test: (facts: SkipFacts) => boolean): ReadonlySet<string> =>
  new Set(Object.entries(SKIP_FACTS).flatMap(([reason, facts]) => (test(facts) ? [reason] : [])));

/** The skips after which continuation has ended until someone acts: the user is told once (see `SkipFacts.stop`). */
export const STOP_NOTICES = reasonsWhere((facts) => facts.stop !== null);

/** The told stops an explicit resume lifts. */
export const RESUME_LIFTS = reasonsWhere((facts) => facts.stop?.lifted != null);

/** The stops an allowance ends: those whose notice is a spent budget, the way on it names (notices.ts `wayOn`). */
export const ALLOW_LIFTS = reasonsWhere((facts) => facts.notice === "budget");

/** A park's line: what it waits for and how long is left ("parked: limit lifts in 2 h 13 min"). */
function parkedWords(park: unknown, wakesInMs: number | undefined): Explanation {
  const left = wakesInMs === undefined ? "" : wakesInMs <= 0 ? " now" : ` in ${duration(wakesInMs)}`;
  if (park === "limit") return { standing: "waiting", text: `parked: limit lifts${left}` };
  if (park === "opencode_retry") return { standing: "waiting", text: `parked: OpenCode retries${left}` };
  return { standing: "waiting", text: `parked as asked: wakes${left}` };
}

/** What a passed check says in a `done`: `npm test passed in 41 s`. */
function checkedLine(verified: unknown): string {
  const { command, durationMs } = verified as { command?: unknown; durationMs?: unknown };
  // Rounded up as every duration here is (a check of 400 ms took "1 s"), and one the clock saw take no time as well:
  // `duration` says "now" for none, and "passed in now" says nothing.
  const took = typeof durationMs === "number" ? ` in ${duration(Math.max(1, durationMs))}` : "";
  return `${typeof command === "string" ? command : "the check"} passed${took}`;
}
