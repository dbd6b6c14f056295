// What a simulated session stores, and how it is rendered in the shapes OpenCode 1.18.33 answers and publishes: a
// session's info, its todos, its messages (`{info, parts}`), and the parts of a turn. A turn is stored as a few numbers
// (its stamp, its times, the todos it left) and rendered on demand as the two assistant messages a scripted model's
// todo-writing turn makes in OpenCode: a step that calls `todowrite`, then a step that says it stops.
import { ascendingId } from "./ids.js";

export const VERSION = "1.18.33";
export const PROVIDER = "scripted";
export const MODEL = "model-1";
/** What each model step reports: 10 input and 5 output tokens, priced as {input: 3, output: 15} $ per million. */
const STEP_COST = 0.000105;
const STEP_INPUT = 10;
const STEP_OUTPUT = 5;
/** A turn's stamps: its two assistant messages and their three parts each. */
export const TURN_STAMPS = 8;
export const CLOSING_TEXT = "I will stop here for now.";

/** A part as the caller gave it (`text`, `synthetic` kept), without the ids OpenCode adds. */
export interface StoredPart {
  type: string;
  text?: string;
  synthetic?: boolean;
  [key: string]: unknown;
}

export interface UserMessage {
  id: string;
  created: number;
  parts: readonly StoredPart[];
  /** The stamp of its first part's id (one stamp per part). */
  partStamp: number;
  agent: string;
  providerID: string;
  modelID: string;
}

export interface Turn {
  /** The user message this turn answers. */
  answers: UserMessage;
  /** The first of its TURN_STAMPS stamps. */
  stamp: number;
  started: number;
  /** 0 while the turn runs. */
  ended: number;
  /** Todos completed once it ended. */
  completedAfter: number;
  /** Its tool call's number in the session (`call_<n>_0`). */
  call: number;
  /** Set when it ended: the provider's error it failed on (it wrote no todos, and no step). */
  failed?: TurnError;
}

/** A provider's error a turn fails on, as OpenCode 1.18.33 keeps an API error's (`session.error`'s `data`). */
export interface TurnError {
  message: string;
  statusCode: number;
  isRetryable: boolean;
  responseHeaders: Record<string, string>;
  /** The answer's body as the provider sent it. */
  responseBody: string;
}

/** The error as OpenCode publishes it (`session.error`) and keeps it on the failed turn's assistant message. */
export function apiError(e: TurnError) {
  return { name: "APIError", data: { ...e, metadata: { url: "http://127.0.0.1/v1/chat/completions" } } };
}

export type Entry = UserMessage | Turn;

export function isTurn(entry: Entry): entry is Turn {
  return (entry as Turn).answers !== undefined;
}

/** What a session's info is made of. */
export interface SessionFacts {
  id: string;
  title: string;
  directory: string;
  created: number;
  updated: number;
  /** Model steps run so far (each reports STEP_INPUT/STEP_OUTPUT tokens and STEP_COST). */
  steps: number;
  /** Whether a prompt came (OpenCode then records the session's agent and model). */
  prompted: boolean;
  /** Whether a turn started (OpenCode then adds the summary of its changes). */
  summarized: boolean;
}

function usage(steps: number, withTotal: boolean) {
  const input = STEP_INPUT * steps;
  const output = STEP_OUTPUT * steps;
  return withTotal
    ? { total: input + output, input, output, reasoning: 0, cache: { read: 0, write: 0 } }
    : { input, output, reasoning: 0, cache: { read: 0, write: 0 } };
}

/** Session info, as `GET /session/:id` and `session.updated` give it. */
export function sessionInfo(s: SessionFacts): Record<string, unknown> {
  return {
    id: s.id,
    slug: `sim-${s.id.slice(-6).toLowerCase()}`,
    projectID: "global",
    directory: s.directory,
    path: s.directory.replace(/^\//, ""),
    ...(s.summarized ? { summary: { additions: 0, deletions: 0, files: 0 } } : {}),
    cost: Math.round(STEP_COST * s.steps * 1e9) / 1e9,
    tokens: usage(s.steps, false),
    title: s.title,
    ...(s.prompted ? { agent: "build", model: { id: MODEL, providerID: PROVIDER, variant: "default" } } : {}),
    version: VERSION,
    time: { created: s.created, updated: s.updated },
  };
}

/** The todo list after `completed` of `total` were completed: `[]` before the first todowrite. */
export function todoItems(
  completed: number,
  total: number,
): Array<{ content: string; status: string; priority: string }> {
  return Array.from({ length: total }, (_, i) => ({
    content: `task ${i + 1}`,
    status: i < completed ? "completed" : "pending",
    priority: "medium",
  }));
}

export function userInfo(sessionID: string, m: UserMessage): Record<string, unknown> {
  return {
    id: m.id,
    sessionID,
    role: "user",
    time: { created: m.created },
    agent: m.agent,
    model: { providerID: m.providerID, modelID: m.modelID },
  };
}

export function userPart(sessionID: string, m: UserMessage, index: number): Record<string, unknown> {
  return { ...m.parts[index], id: ascendingId("prt", m.partStamp + index), sessionID, messageID: m.id };
}

/** The times of a turn's steps, spread over its last milliseconds. */
export function turnTimes(t: Turn) {
  const end = Math.max(t.ended, t.started + 4);
  return { toolStart: end - 4, firstDone: end - 3, secondCreated: end - 2, textEnd: end - 1, secondDone: end };
}

/** One of a turn's two assistant messages (`which` 0: the todowrite step, 1: the closing text); unfinished if running. */
export function assistantInfo(sessionID: string, t: Turn, which: 0 | 1, cwd: string, done: boolean) {
  const times = turnTimes(t);
  const created = which === 0 ? t.started : times.secondCreated;
  return {
    id: ascendingId("msg", t.stamp + 4 * which),
    sessionID,
    role: "assistant",
    time: done ? { created, completed: which === 0 ? times.firstDone : times.secondDone } : { created },
    parentID: t.answers.id,
    modelID: t.answers.modelID,
    providerID: t.answers.providerID,
    mode: t.answers.agent,
    agent: t.answers.agent,
    path: { cwd, root: "/" },
    cost: done ? STEP_COST : 0,
    tokens: usage(done ? 1 : 0, done),
    ...(done ? { finish: which === 0 ? "tool-calls" : "stop" } : {}),
  };
}

function partBase(sessionID: string, t: Turn, offset: number, type: string) {
  return {
    id: ascendingId("prt", t.stamp + offset),
    sessionID,
    messageID: ascendingId("msg", t.stamp + 4 * (offset >> 2)),
    type,
  };
}

export function stepStart(sessionID: string, t: Turn, which: 0 | 1) {
  return partBase(sessionID, t, 4 * which + 1, "step-start");
}

export function stepFinish(sessionID: string, t: Turn, which: 0 | 1) {
  return {
    ...partBase(sessionID, t, 4 * which + 3, "step-finish"),
    reason: which === 0 ? "tool-calls" : "stop",
    cost: STEP_COST,
    tokens: usage(1, true),
  };
}

/** The todowrite part in one of its states: `pending` (no input yet), `running`, `completed` (output, title, metadata). */
export function toolPart(sessionID: string, t: Turn, total: number, status: "pending" | "running" | "completed") {
  const base = { ...partBase(sessionID, t, 2, "tool"), callID: `call_${t.call}_0`, tool: "todowrite" };
  if (status === "pending") return { ...base, state: { status, input: {}, raw: "" } };
  const todos = todoItems(t.completedAfter, total);
  const { toolStart, firstDone } = turnTimes(t);
  if (status === "running") return { ...base, state: { status, input: { todos }, time: { start: toolStart } } };
  return {
    ...base,
    state: {
      status,
      input: { todos },
      output: JSON.stringify(todos, null, 2),
      title: `${total - t.completedAfter} todos`,
      metadata: { todos, truncated: false },
      time: { start: toolStart, end: firstDone },
    },
  };
}

/** The closing text part: empty when it starts streaming, the whole text once it ended. */
export function textPart(sessionID: string, t: Turn, done: boolean) {
  const { secondCreated, textEnd } = turnTimes(t);
  return {
    ...partBase(sessionID, t, 6, "text"),
    text: done ? CLOSING_TEXT : "",
    time: done ? { start: secondCreated, end: textEnd } : { start: secondCreated },
  };
}

/** A failed turn's one assistant message: no step, no cost, the error it failed on. */
export function failedAssistantInfo(sessionID: string, t: Turn, cwd: string, error: TurnError) {
  const { finish: _none, ...info } = assistantInfo(sessionID, t, 0, cwd, true);
  return {
    ...info,
    time: { created: t.started, completed: t.ended },
    cost: 0,
    tokens: usage(0, false),
    error: apiError(error),
  };
}

/** A finished turn's two messages (a failed one's one), or the running turn's first, unfinished and without parts. */
export function turnMessages(sessionID: string, t: Turn, total: number, cwd: string) {
  if (t.ended === 0) return [{ info: assistantInfo(sessionID, t, 0, cwd, false), parts: [] }];
  if (t.failed) return [{ info: failedAssistantInfo(sessionID, t, cwd, t.failed), parts: [] }];
  return [
    {
      info: assistantInfo(sessionID, t, 0, cwd, true),
      parts: [stepStart(sessionID, t, 0), toolPart(sessionID, t, total, "completed"), stepFinish(sessionID, t, 0)],
    },
    {
      info: assistantInfo(sessionID, t, 1, cwd, true),
      parts: [stepStart(sessionID, t, 1), textPart(sessionID, t, true), stepFinish(sessionID, t, 1)],
    },
  ];
}

/** `GET /session/:id/message[?limit=n]`: the last `limit` messages (all when absent or 0), oldest first. */
export function messageList(sessionID: string, entries: readonly Entry[], total: number, cwd: string, limit = 0) {
  const out: unknown[] = [];
  for (let i = entries.length - 1; i >= 0 && (limit <= 0 || out.length < limit); i--) {
    const entry = entries[i]!;
    if (!isTurn(entry)) {
      out.push({ info: userInfo(sessionID, entry), parts: entry.parts.map((_, n) => userPart(sessionID, entry, n)) });
      continue;
    }
    const messages = turnMessages(sessionID, entry, total, cwd);
    for (let m = messages.length - 1; m >= 0 && (limit <= 0 || out.length < limit); m--) out.push(messages[m]);
  }
  return out.reverse();
}
