// What the guards learn from a session's messages: the real agent/model to continue with, an unanswered abort,
// a pending question, a compaction, and the enforcer's own injections (found by the id each one carries).
import { classifyError, type ErrorKind } from "./errors.js";
import type { MessageInfo } from "./fields.js";
import { findInjectionId } from "./prompt.js";

export interface MessagePart {
  type: string;
  text?: string;
  synthetic?: boolean;
  tool?: string;
  toolStatus?: string;
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

export interface MessageFacts {
  /** Agent, model and variant of the latest real user message: what a continuation is sent with. */
  latestReal?: AgentChoice & { messageId: string; createdAt?: number };
  /** The last assistant turn ended in an error of this kind and no real user message came after it. */
  unansweredErrorKind?: ErrorKind;
  /** A question tool call is still waiting for the user's answer. */
  unfinishedQuestion: boolean;
  /** `running`: the latest turn is a compaction still in progress; `just_ran`: the latest turn is a finished compaction. */
  compaction?: "running" | "just_ran";
  /** Ids of the enforcer's own injections found in user messages. */
  ownInjectionIds: string[];
}

const QUESTION_TOOLS: ReadonlySet<string> = new Set(["question", "askuserquestion", "ask_user"]);
const UNFINISHED_TOOL: ReadonlySet<string> = new Set(["pending", "running"]);

function isCompactionMessage(message: SessionMessage): boolean {
  if (message.agent === "compaction") return true;
  if (message.role === "assistant" && message.summary === true) return true;
  return message.parts.some((p) => p.type === "compaction");
}

/** A user message is "real" when a person wrote it: not one of ours, not compaction, not only synthetic text. */
export function classifyUserMessage(message: SessionMessage): "real" | "own" | "synthetic" {
  for (const part of message.parts) {
    if (part.type === "text" && part.text && findInjectionId(part.text)) return "own";
  }
  if (isCompactionMessage(message)) return "synthetic";
  const textParts = message.parts.filter((p) => p.type === "text");
  if (textParts.length > 0 && textParts.every((p) => p.synthetic === true)) return "synthetic";
  return "real";
}

/** Messages oldest first, as OpenCode returns them. */
export function inspectMessages(messages: readonly SessionMessage[]): MessageFacts {
  const facts: MessageFacts = { unfinishedQuestion: false, ownInjectionIds: [] };
  let lastAssistant: SessionMessage | undefined;
  let lastAssistantIndex = -1;
  let lastRealIndex = -1;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === "assistant") {
      lastAssistant = message;
      lastAssistantIndex = i;
      continue;
    }
    if (message.role !== "user") continue;
    const kind = classifyUserMessage(message);
    if (kind === "own") {
      for (const part of message.parts) {
        const id = part.type === "text" && part.text ? findInjectionId(part.text) : undefined;
        if (id) facts.ownInjectionIds.push(id);
      }
    }
    if (kind === "real") lastRealIndex = i;
    // Our own injections carry the agent and model we chose from a real message; compaction turns do not.
    if (kind !== "synthetic" && message.agent !== "compaction") {
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
  if (lastAssistant && lastAssistantIndex > lastRealIndex && lastAssistant.errorName) {
    facts.unansweredErrorKind = classifyError(lastAssistant.errorName, lastAssistant.errorMessage);
  }
  if (lastAssistant) {
    facts.unfinishedQuestion = lastAssistant.parts.some(
      (p) => p.type === "tool" && QUESTION_TOOLS.has((p.tool ?? "").toLowerCase()) && UNFINISHED_TOOL.has(p.toolStatus ?? ""),
    );
  }
  const last = messages[messages.length - 1];
  if (last && isCompactionMessage(last)) {
    facts.compaction = last.role === "assistant" && last.completedAt !== undefined ? "just_ran" : "running";
  }
  return facts;
}
