// What the guards learn from a session's messages: the real agent/model to continue with, an unanswered error, a
// pending question (a question tool, or a question asked in plain text), a compaction, the enforcer's own injections
// (known by the message id it chose for each) and what the model did in reply to the last one.
import { classifyError, type ErrorKind, type ErrorReport } from "./errors.js";
import type { MessageInfo, Usage } from "./fields.js";
import { COMMAND_NOTE_PREFIX, findInjectionId } from "./prompt.js";
import { detectTextQuestion } from "./text-question.js";
import type { FileEvidence, TurnFiles } from "./work.js";

export interface MessagePart {
  type: string;
  text?: string;
  synthetic?: boolean;
  tool?: string;
  toolStatus?: string;
  /** Files a completed writing tool or a `patch` part says this part touched. */
  files?: FileEvidence[];
  /** A `step-finish` part's bill: what that one step cost. */
  usage?: Usage;
}

/** A message as the guards read it: its info fields and its parts. */
export interface SessionMessage extends Omit<MessageInfo, "sessionId"> {
  parts: MessagePart[];
}

export interface AgentChoice {
  agent?: string;
  providerId?: string;
  modelId?: string;
  variant?: string;
  writeDenied?: boolean;
}

/**
 * What the model did after the enforcer's last continuation, up to the next user message: nothing yet, words only,
 * some work, or a turn that failed (a provider error: neither work nor a refusal to work).
 */
export type ReplyKind = "none" | "text_only" | "worked" | "errored";

export interface MessageFacts {
  /** Agent, model and variant of the latest real user message: what a continuation is sent with. */
  latestReal?: AgentChoice & { messageId: string; createdAt?: number };
  /** The last assistant turn ended in an error of this kind and no real user message came after it. */
  unansweredErrorKind?: ErrorKind;
  unansweredError?: ErrorReport;
  /** When the message that ended in that error was created (OpenCode's clock). */
  unansweredErrorAt?: number;
  /**
   * When the last assistant message ended without an error (its completion, else its creation; OpenCode's clock);
   * `null` when the messages hold no assistant message or the last one ended in an error. Absent when they do not
   * say when.
   */
  turnEndedWellAt?: number | null;
  /** A question tool call is still waiting for the user's answer. */
  unfinishedQuestion: boolean;
  /** The last message is a finished assistant message that ends by asking the user something in plain text. */
  textQuestion?: string;
  /** `running`: a compaction is requested or in progress; `finished`: one finished and nothing happened since. */
  compaction?: "running" | "finished";
  /** Ids of the enforcer's own injections found among the messages (by their message ids). */
  ownInjectionIds: string[];
  /** Message ids of those injections. */
  ownMessageIds: string[];
  /** The reply to the last own injection, when no user message came after it. */
  replyToLastInjection?: ReplyKind;
  /**
   * For `answerOf` (a user message id): whether the assistant message right before it asked the user something (a
   * question tool or a question in text). Undefined when that message is not in the window.
   */
  answersQuestion?: boolean;
  /** The files the latest turn (the replies to the last user message) touched; absent when it touched none. */
  turnFiles?: TurnFiles;
}

/**
 * Whether the messages show a turn that ended well since an error recorded at `errorAt` (this process's clock, taken
 * to agree with OpenCode's). No error in them is not enough: a prompt OpenCode refused after its 204 writes no message
 * at all, so the messages read show the turn before the error, and it ended well. Messages that do not say when their
 * turns ended are taken at their word, and so is an error recorded without its time.
 */
export function turnEndedWellSince(messages: MessageFacts, errorAt: number | null | undefined): boolean {
  if (messages.unansweredErrorKind !== undefined) return false;
  const endedAt = messages.turnEndedWellAt;
  if (endedAt === undefined || errorAt == null) return true;
  return endedAt !== null && endedAt >= errorAt;
}

/** Tools through which agents ask the user (OpenCode's own, and the names other agents and plugins use). */
const QUESTION_TOOLS: ReadonlySet<string> = new Set([
  "question",
  "askuserquestion",
  "askuser",
  "askquestion",
  "askfollowupquestion",
  "requestuserinput",
  "askhuman",
  "userinput",
]);
const UNFINISHED_TOOL: ReadonlySet<string> = new Set(["pending", "running"]);
/** Tool calls that only keep the books: they are not work on the task. */
const BOOKKEEPING_TOOLS: ReadonlySet<string> = new Set(["todowrite", "todoread"]);
/** Assistant parts that change something or delegate work. */
const WORK_PARTS: ReadonlySet<string> = new Set(["patch", "subtask", "agent"]);

export function isQuestionTool(tool: string | undefined): boolean {
  return tool !== undefined && QUESTION_TOOLS.has(tool.toLowerCase().replace(/[^a-z]/g, ""));
}

function isCompactionMessage(message: Pick<SessionMessage, "agent" | "role" | "summary" | "parts">): boolean {
  if (message.agent === "compaction") return true;
  if (message.role === "assistant" && message.summary === true) return true;
  return message.parts.some((p) => p.type === "compaction");
}

export type UserMessageKind = "real" | "own" | "command" | "synthetic";

/**
 * The enforcer's own continuations: the message id it chose for each (OpenCode takes it with the prompt) → the
 * injection's id. Only the enforcer knows these ids before the message exists; a person cannot type one.
 */
export interface OwnMessages {
  get(messageId: string): string | undefined;
}

const NONE: OwnMessages = { get: () => undefined };

/**
 * The one rule for user messages, used for live events and for messages read from OpenCode: `own` when its message id
 * is one the enforcer chose (`ours`) — never for its text, which a person can quote, type or attach —, `command` when
 * it is the note of /stop- or /resume-continuation, `synthetic` for a compaction or when every text part is synthetic
 * (OpenCode's own additions), else `real`: a person wrote it. A message with no text part (yet) is real.
 */
export function classifyUserMessage(
  message: Pick<SessionMessage, "id" | "agent" | "role" | "summary" | "parts">,
  ours: OwnMessages = NONE,
): UserMessageKind {
  if (ours.get(message.id) !== undefined) return "own";
  const textParts = message.parts.filter((p) => p.type === "text");
  if (textParts.some((p) => p.text?.startsWith(COMMAND_NOTE_PREFIX))) return "command";
  if (isCompactionMessage(message)) return "synthetic";
  if (textParts.length > 0 && textParts.every((p) => p.synthetic === true)) return "synthetic";
  return "real";
}

/** A live message's parts so far settle its kind once a part is decisive: a non-synthetic text or a compaction. */
export function isDecisivePart(part: MessagePart): boolean {
  return part.type === "compaction" || (part.type === "text" && part.synthetic !== true);
}

/**
 * The injection ids a user message's text claims (our id line, in any text part). A claim is not proof: the message
 * is ours only when the injection it names was sent with this very message id (see OwnMessages).
 */
export function claimedInjectionIds(message: Pick<SessionMessage, "parts">): string[] {
  const ids: string[] = [];
  for (const part of message.parts) {
    const id = part.type === "text" && part.text ? findInjectionId(part.text) : undefined;
    if (id) ids.push(id);
  }
  return ids;
}

function textOf(message: SessionMessage): string {
  return message.parts
    .filter((p) => p.type === "text" && p.synthetic !== true && typeof p.text === "string")
    .map((p) => p.text)
    .join("\n\n");
}

/** Whether an assistant message asks the user: an unfinished or finished question tool call, or a question in text. */
function asksUser(message: SessionMessage): boolean {
  if (message.parts.some((p) => p.type === "tool" && isQuestionTool(p.tool))) return true;
  return detectTextQuestion(textOf(message)).asks;
}

function replyKind(replies: readonly SessionMessage[]): ReplyKind {
  if (replies.length === 0) return "none";
  const worked = replies.some((m) =>
    m.parts.some(
      (p) =>
        WORK_PARTS.has(p.type) ||
        (p.type === "tool" && !BOOKKEEPING_TOOLS.has((p.tool ?? "").toLowerCase()) && !isQuestionTool(p.tool)),
    ),
  );
  if (worked) return "worked";
  return replies.at(-1)?.error ? "errored" : "text_only";
}

export interface InspectOptions {
  /** Whether to look for a question asked in text (the `detectTextQuestions` option). */
  detectTextQuestions?: boolean;
  /** A user message id whose preceding assistant message is checked for a question (`answersQuestion`). */
  answerOf?: string | null;
  /** The enforcer's own continuations among these messages; without it no message is taken for ours. */
  ours?: OwnMessages;
}

/** Messages oldest first, as OpenCode returns them. */
export function inspectMessages(messages: readonly SessionMessage[], options: InspectOptions = {}): MessageFacts {
  const facts: MessageFacts = { unfinishedQuestion: false, ownInjectionIds: [], ownMessageIds: [] };
  let lastAssistantIndex = -1;
  let lastRealIndex = -1;
  let lastOwnIndex = -1;
  let lastUserIndex = -1;
  let lastCompactionIndex = -1;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (isCompactionMessage(message)) lastCompactionIndex = i;
    if (message.role === "assistant") {
      lastAssistantIndex = i;
      continue;
    }
    if (message.role !== "user") continue;
    lastUserIndex = i;
    const kind = classifyUserMessage(message, options.ours);
    if (kind === "own") {
      lastOwnIndex = i;
      facts.ownMessageIds.push(message.id);
      facts.ownInjectionIds.push(options.ours!.get(message.id)!);
    }
    if (kind === "real") lastRealIndex = i;
    if (options.answerOf && message.id === options.answerOf) {
      const before = messages.slice(0, i).findLast((m) => m.role === "assistant");
      facts.answersQuestion = before ? asksUser(before) : false;
    }
    // Our own injections carry the agent and model we chose from a real message; compaction turns do not.
    if ((kind === "real" || kind === "own" || kind === "command") && message.agent !== "compaction") {
      facts.latestReal = {
        messageId: message.id,
        createdAt: message.createdAt,
        agent: message.agent,
        providerId: message.providerId,
        modelId: message.modelId,
        variant: message.variant,
        writeDenied: message.writeDenied,
      };
    }
  }
  const lastAssistant = lastAssistantIndex >= 0 ? messages[lastAssistantIndex]! : undefined;
  if (lastAssistant && lastAssistantIndex > lastRealIndex && lastAssistant.error) {
    facts.unansweredErrorKind = classifyError(lastAssistant.error);
    facts.unansweredError = lastAssistant.error;
    if (lastAssistant.createdAt !== undefined) facts.unansweredErrorAt = lastAssistant.createdAt;
  }
  facts.turnEndedWellAt =
    !lastAssistant || lastAssistant.error ? null : (lastAssistant.completedAt ?? lastAssistant.createdAt);
  if (lastAssistant) {
    facts.unfinishedQuestion = lastAssistant.parts.some(
      (p) => p.type === "tool" && isQuestionTool(p.tool) && UNFINISHED_TOOL.has(p.toolStatus ?? ""),
    );
  }
  const last = messages.at(-1);
  if (
    options.detectTextQuestions !== false &&
    last &&
    last.role === "assistant" &&
    !last.error &&
    !isCompactionMessage(last)
  ) {
    const verdict = detectTextQuestion(textOf(last));
    if (verdict.asks) facts.textQuestion = verdict.evidence ?? "";
  }
  if (lastOwnIndex >= 0 && lastOwnIndex === lastUserIndex) {
    facts.replyToLastInjection = replyKind(messages.slice(lastOwnIndex + 1).filter((m) => m.role === "assistant"));
  }
  if (lastCompactionIndex >= 0) facts.compaction = compactionState(messages, lastCompactionIndex, options.ours);
  if (lastUserIndex >= 0) {
    const files = filesTouched(messages.slice(lastUserIndex + 1));
    if (files.length > 0) facts.turnFiles = { answers: lastOwnIndex === lastUserIndex ? "own" : "other", files };
  }
  return facts;
}

/** One entry per file the assistant's parts touched: the first `before`, the last `after`, changed if any says so. */
function filesTouched(turn: readonly SessionMessage[]): FileEvidence[] {
  const byPath = new Map<string, FileEvidence>();
  for (const message of turn) {
    if (message.role !== "assistant") continue;
    for (const file of message.parts.flatMap((p) => p.files ?? [])) {
      const seen = byPath.get(file.path);
      if (!seen) {
        byPath.set(file.path, { ...file });
        continue;
      }
      if (seen.before === undefined && file.before !== undefined) seen.before = file.before;
      if (file.after !== undefined) seen.after = file.after;
      // An edit after a write: the content the write gave is no longer what the file holds.
      else if (file.changed) delete seen.after;
      if (file.changed !== undefined) seen.changed = (seen.changed ?? false) || file.changed;
    }
  }
  return [...byPath.values()];
}

/**
 * A compaction is `running` until its summary message completes, `finished` while nothing real happened after it.
 * OpenCode's own follow-up after an automatic compaction (a synthetic "Continue if you have next steps" message, or
 * the replayed last user message) does not count as activity; the assistant's answer to it does.
 */
function compactionState(
  messages: readonly SessionMessage[],
  index: number,
  ours: OwnMessages | undefined,
): "running" | "finished" | undefined {
  const compaction = messages[index]!;
  const after = messages.slice(index + 1);
  if (compaction.role === "user" && !after.some((m) => m.role === "assistant" && isCompactionMessage(m)))
    return "running";
  if (compaction.role === "assistant" && compaction.completedAt === undefined && !compaction.error) return "running";
  const activity = after.some(
    (m) =>
      (m.role === "assistant" && !isCompactionMessage(m)) ||
      (m.role === "user" && classifyUserMessage(m, ours) === "real" && !replaysEarlier(messages, m, index)),
  );
  return activity ? undefined : "finished";
}

/** After an overflow compaction OpenCode replays the last real user message: the same text, not a new act. */
function replaysEarlier(messages: readonly SessionMessage[], message: SessionMessage, before: number): boolean {
  const text = textOf(message);
  return text !== "" && messages.slice(0, before).some((m) => m.role === "user" && textOf(m) === text);
}
