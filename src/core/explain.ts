// A decision in words, for people: the toast that says why continuation stopped, and the TUI panel's last line.
// Pure: the audit row's event, reason and detail in, a short sentence out. A skip's and a cancel's words are their
// reason's (skip-reasons.ts, cancel-reasons.ts); the words they are made of are in words.ts.
import { cancelFactsOf } from "./cancel-reasons.js";
import { skipFactsOf } from "./skip-reasons.js";
import { type Explanation, money, numberIn, plural, RESUME_HINT, stoppedBy, tokens } from "./words.js";

/** A continuation after a turn that changed files and closed no todo: the work seen, and how long it may go on. */
function working(detail: Record<string, unknown>): Explanation | undefined {
  const progress = detail.progress as Record<string, unknown> | undefined;
  const work = detail.work as Record<string, unknown> | undefined;
  if (progress?.counted !== "files" || !work) return undefined;
  return {
    standing: "continuing",
    text: `working: ${plural(numberIn(progress, "filesChanged"), "file")} changed`,
    hint: `no todo closed yet (${numberIn(work, "continuations") ?? "?"} of ${numberIn(work, "limit") ?? "?"})`,
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
      return reason ? skipFactsOf(reason)?.words(detail) : undefined;
    case "cancelled":
      if (!reason) return undefined;
      return { ...(cancelFactsOf(reason)?.words ?? { standing: "waiting", text: `cancelled: ${reason}` }) };
    case "injection_failed":
      return reason === "gave_up" || detail.final === true
        ? {
            standing: "stopped",
            text: `stopped: sending failed ${plural(numberIn(detail, "attempt"), "time")}`,
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

/** "a, b and c"; undefined for none. */
function listed(words: readonly string[]): string | undefined {
  if (words.length === 0) return undefined;
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(", ")} and ${words.at(-1)}`;
}

/** "the stop and the provider's refusal"; undefined when nothing was lifted. */
export function liftedWords(lifted: readonly string[]): string | undefined {
  return listed(lifted.map((reason) => skipFactsOf(reason)?.stop?.lifted ?? reason.replaceAll("_", " ")));
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
