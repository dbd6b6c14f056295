// The loop protections' counts, each judged from the last continuation's turn: the continuations since the todos
// last made progress (those whose turns did no work, and those whose turns changed files), and the replies in a row
// to continuations that were text only. Pure; the guard chain (decide.ts) reads them, the engine stores them with the
// next continuation.
import type { DecisionInput, Progress } from "./decision.js";
import { progressSince } from "./todos.js";
import { judgeFiles } from "./work.js";

export interface ProgressStreaks {
  /** Continuations since the last todo progress whose turns did no work, including the last one sent. */
  stagnant: number;
  /** Continuations since the last todo progress whose turns changed files, including the last one sent. */
  work: number;
  progress?: Progress;
}

/**
 * What the last continuation's turn counted as, and the two counts since the last todo progress. Todo progress
 * resets both; a turn that changed files adds to `work` and holds `stagnant`; any other adds to `stagnant` and holds
 * `work`. Holding rather than resetting keeps the run bounded whatever a model mixes: at most `stagnationLimit` - 1
 * + `workWithoutProgressLimit` continuations without a todo moving. `undefined` while the todos are unknown.
 */
export function progressStreaks({
  stage,
  durable,
  todos,
  live,
  config,
  retrying,
}: Pick<DecisionInput, "stage" | "durable" | "todos" | "live" | "config" | "retrying">): ProgressStreaks | undefined {
  if (!Array.isArray(todos)) return undefined;
  if (!durable.ledger) return { stagnant: 0, work: 0 };
  if (progressSince(durable.ledger, todos)) return { stagnant: 0, work: 0, progress: { counted: "todos" } };
  const stagnant = durable.stagnantContinuations;
  const work = durable.workContinuations ?? 0;
  // The deadline reads no messages (its todos are the events'): the idle already judged this turn's files, and a
  // count added here would stop a turn of work that the idle let through. Only todos moving since then tell. A retry
  // likewise: the continuation it re-sends judged the same turn, against todos it then took as its baseline.
  if ((stage === "deadline" && live.messages === undefined) || retrying) return { stagnant, work };
  const turn = live.messages?.turnFiles;
  const files = turn?.answers === "own" ? judgeFiles(durable.fileLedger ?? null, turn) : undefined;
  const seen = files ? { filesChanged: files.changed, filesChurned: files.churned } : {};
  if (files && files.changed > 0 && config.workWithoutProgressLimit > 0)
    return { stagnant, work: work + 1, progress: { counted: "files", ...seen } };
  return { stagnant: stagnant + 1, work, progress: { counted: "none", ...seen } };
}

/** Continuations since the last todo progress whose turns did no work (see `progressStreaks`). */
export function stagnantStreak(
  input: Pick<DecisionInput, "stage" | "durable" | "todos" | "live" | "config" | "retrying">,
): number | undefined {
  return progressStreaks(input)?.stagnant;
}

/**
 * Text-only replies in a row to continuations, including the reply to the last one. A reply that did work (a tool
 * call, an edit, a subagent) or any progress ends the streak; no reply yet leaves it as it was, and so does a retry
 * (the reply seen is the one the continuation it re-sends was judged on).
 */
export function unproductiveStreak({
  durable,
  todos,
  live,
  retrying,
}: Pick<DecisionInput, "durable" | "todos" | "live" | "retrying">): number | undefined {
  const reply = live.messages?.replyToLastInjection;
  if (!Array.isArray(todos) || reply === undefined) return undefined;
  if (!durable.ledger || progressSince(durable.ledger, todos)) return 0;
  const before = durable.unproductiveReplies ?? 0;
  if (retrying) return before;
  if (reply === "text_only") return before + 1;
  return reply === "worked" ? 0 : before;
}
