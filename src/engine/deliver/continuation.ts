// What one continuation is made of, built once the guards let it go: the injection row (recorded `pending` with the
// claim), the prompt request (the message id we choose, the agent and model of the latest real message), the detail
// its audit rows carry, and what the session's row becomes once it is out (core/transitions.ts).
import { agentChoice, progressDetail, type HostFacts } from "../../core/decision-input.js";
import { renderPrompt, transcriptLine } from "../../core/prompt.js";
import { readWakeNote, wakeNote } from "../../core/wake-note.js";
import { verifyFailedNote } from "../../core/verify-note.js";
import type { VerificationFact } from "../../core/decision.js";
import { parseLedger, summarize, type Todo, type TodoSummary } from "../../core/todos.js";
import { continuationPatch } from "../../core/transitions.js";
import { parseFileLedger } from "../../core/work.js";
import type { Progress } from "../../core/decision.js";
import type { PromptRequest } from "../../host/port.js";
import type { NewInjection } from "../../store/port.js";
import type { SessionRow } from "../../store/schema.js";
import type { EngineContext } from "../context.js";
import { newId, newMessageId } from "../ids.js";
import type { DueInfo } from "../wait/countdowns.js";
import type { Armed } from "../wait/held-countdowns.js";

/** A continuation ready to be claimed and sent. */
export interface Continuation {
  injection: NewInjection;
  request: PromptRequest & { messageId: string };
  /** What its audit rows say about it (fired, injected, injection_failed). */
  detail: Record<string, unknown>;
  summary: TodoSummary;
  /** The session's turn signals when the call began (a later one confirms the turn started). */
  signalsAtCall: number;
}

export interface ContinuationInput {
  armed: Armed;
  info: DueInfo;
  /**
   * From due to claim: how long the attempt waited in the queue (behind the session's earlier ones and the global
   * cap), and how long the guards took once it ran (the reads of OpenCode among them).
   */
  checked: { queuedMs: number; checkMs: number };
  /** OpenCode's answers right before the prompt; the todos are known to be readable. */
  facts: HostFacts;
  row: SessionRow | undefined;
  decision: {
    stagnantStreak: number;
    workStreak: number;
    unproductiveStreak: number;
    progress?: Progress;
    /** The check of the finished list failed: the continuation says so, with its last lines. */
    checkFailed?: VerificationFact;
  };
  /** The session's turn signals now (see Continuation.signalsAtCall). */
  turnSignals: number;
}

/**
 * What the prompt says before the list: why the session was woken from its park, when this is the first continuation
 * since, and how the check of the finished list failed, when it did.
 */
function promptNote(row: SessionRow | undefined, checkFailed: VerificationFact | undefined): string | undefined {
  const woken = readWakeNote(row?.wakeNote);
  const notes = [woken && wakeNote(woken), checkFailed && verifyFailedNote(checkFailed)].filter(Boolean);
  return notes.length > 0 ? notes.join("\n\n") : undefined;
}

export function prepareContinuation(ctx: EngineContext, input: ContinuationInput): Continuation {
  const { armed, info, checked, facts, row, decision } = input;
  const { config } = ctx;
  const { sessionId } = armed.row;
  const todos = facts.todos as Todo[];
  const choice = agentChoice(row, facts);
  const summary = summarize(todos);
  const now = ctx.clock.now();
  const injectionId = newId("inj");
  const messageId = newMessageId(now);
  const model =
    choice.providerId && choice.modelId ? { providerId: choice.providerId, modelId: choice.modelId } : undefined;
  const modelName = model ? `${model.providerId}/${model.modelId}` : null;
  const onSent = continuationPatch({
    ledger: parseLedger(row?.todoSnapshot),
    todos,
    fileLedger: parseFileLedger(row?.fileLedger),
    turnFiles: facts.messages?.turnFiles,
    stagnantStreak: decision.stagnantStreak,
    workStreak: decision.workStreak,
    unproductiveStreak: decision.unproductiveStreak,
  });
  return {
    injection: {
      id: injectionId,
      sessionId,
      directory: ctx.followed.directory,
      server: ctx.followed.server ?? null,
      countdownId: armed.row.id,
      messageId,
      createdAt: now,
      agent: choice.agent ?? null,
      model: modelName,
      variant: choice.variant ?? null,
      todosTotal: summary.total,
      todosOpen: summary.open,
      attempt: armed.row.attempt,
      onSent: JSON.stringify(onSent),
      owner: ctx.owner,
      // Long enough for the call and the look-up after it; a process that dies holds it no longer than this.
      leaseUntil: now + config.promptTimeoutMs + config.hostTimeoutMs + config.leaseMs,
    },
    request: {
      sessionId,
      messageId,
      text: renderPrompt(todos, injectionId, config.prompt, promptNote(row, decision.checkFailed)),
      display: config.quietTranscript ? transcriptLine(todos) : undefined,
      agent: choice.agent,
      model,
      variant: choice.variant,
    },
    detail: {
      countdownId: armed.row.id,
      agent: choice.agent ?? null,
      model: modelName,
      todosOpen: summary.open,
      todosTotal: summary.total,
      attempt: armed.row.attempt,
      lateMs: info.lateMs,
      resumed: info.resumed,
      ...checked,
      ...progressDetail(decision, config.workWithoutProgressLimit),
      ...(decision.checkFailed ? { checkFailed: decision.checkFailed.command } : {}),
    },
    summary,
    signalsAtCall: input.turnSignals,
  };
}
