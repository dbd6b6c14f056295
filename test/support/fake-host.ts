// A scripted OpenCode for engine tests: it keeps todos, messages, statuses and agents the test sets, records every
// prompt and toast, and can be told to fail or hang. A prompt it accepts becomes a user message carrying the text,
// as in OpenCode, so reconciliation can find it.
import type { BashVerdict } from "../../src/host/bash-permission.js";
import type { SessionStatus } from "../../src/core/events.js";
import type { SessionMessage } from "../../src/core/messages.js";
import type { Todo } from "../../src/core/todos.js";
import {
  HostHttpError,
  type HostAgent,
  type HostPort,
  type HostSession,
  type LogLevel,
  type PromptRequest,
  type ToastRequest,
} from "../../src/host/port.js";

/**
 * `fail`: throws before anything reached OpenCode's state. `accept-then-fail`: OpenCode took the prompt, the answer
 * was lost (a reset connection, a 5xx after queueing). `reject`: HTTP 400, refused. `refused`: no connection at all.
 * `accept-idle`: accepted and answered, but no turn will ever start.
 */
export type Behaviour = "ok" | "fail" | "hang" | "garbage" | "accept-then-fail" | "reject" | "refused" | "accept-idle";

export class FakeHost implements HostPort {
  todos = new Map<string, Todo[]>();
  messages = new Map<string, SessionMessage[]>();
  sessions = new Map<string, HostSession>();
  children = new Map<string, string[]>();
  statuses: Record<string, SessionStatus> = {};
  agents: HostAgent[] = [
    { name: "build", canWrite: true },
    { name: "plan", canWrite: false },
    { name: "reader", canWrite: false },
  ];
  prompts: PromptRequest[] = [];
  toasts: ToastRequest[] = [];
  logs: Array<{ level: LogLevel; message: string; extra?: Record<string, unknown> }> = [];
  todoBehaviour: Behaviour = "ok";
  /** A todo read that answers, but only after this long (a loaded OpenCode). */
  todoDelayMs = 0;
  messagesBehaviour: Behaviour = "ok";
  statusBehaviour: Behaviour = "ok";
  /** Behaviour of the next prompt calls, consumed in order; then `promptDefault`. */
  promptScript: Behaviour[] = [];
  promptDefault: Behaviour = "ok";
  /** A prompt that "hangs" may still have been accepted by the server. */
  hangAccepts = false;
  calls = { todos: 0, messages: 0, prompt: 0 };
  /**
   * A prompt accepted with `ok` is answered by a turn that did some work (an assistant message with a tool call), as
   * a model would; off, the continuation stays unanswered (a turn that never started).
   */
  autoReply = true;
  /** Called for each prompt accepted with `ok` (an engine test can play the turn that follows). */
  onAccepted: ((request: PromptRequest) => void) | undefined;
  /** The project's files on disk (see HostPort.hashFiles); absent: a host that cannot read them. */
  hashFiles: HostPort["hashFiles"];
  private messageSeq = 0;

  setTodos(sessionId: string, todos: Array<[string, string]>): void {
    this.todos.set(
      sessionId,
      todos.map(([content, status]) => ({ content, status, priority: "medium" })),
    );
  }

  addUserMessage(sessionId: string, text: string, extra: Partial<SessionMessage> = {}): SessionMessage {
    const message: SessionMessage = {
      id: `msg_${String(++this.messageSeq).padStart(6, "0")}`,
      role: "user",
      createdAt: Date.now(),
      agent: "build",
      providerId: "scripted",
      modelId: "model-1",
      parts: [{ type: "text", text }],
      ...extra,
    };
    this.messageList(sessionId).push(message);
    return message;
  }

  addAssistantMessage(sessionId: string, extra: Partial<SessionMessage> = {}): SessionMessage {
    const message: SessionMessage = {
      id: `msg_${String(++this.messageSeq).padStart(6, "0")}`,
      role: "assistant",
      createdAt: Date.now(),
      completedAt: Date.now(),
      agent: "build",
      parts: [{ type: "text", text: "ok" }],
      ...extra,
    };
    this.messageList(sessionId).push(message);
    return message;
  }

  messageList(sessionId: string): SessionMessage[] {
    let list = this.messages.get(sessionId);
    if (!list) this.messages.set(sessionId, (list = []));
    return list;
  }

  private async behave<T>(behaviour: Behaviour, signal: AbortSignal, value: () => T, garbage: unknown): Promise<T> {
    if (behaviour === "fail" || behaviour === "accept-then-fail")
      throw new TypeError("fetch failed", { cause: new Error("socket hang up (ECONNRESET)") });
    if (behaviour === "reject") throw new HostHttpError("prompt", 400, "invalid request");
    if (behaviour === "refused")
      throw new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:4096") });
    if (behaviour === "hang") {
      await new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
    }
    if (behaviour === "garbage") return garbage as T;
    return value();
  }

  async getTodos(sessionId: string, signal: AbortSignal): Promise<Todo[]> {
    this.calls.todos++;
    if (this.todoDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.todoDelayMs));
    return this.behave(this.todoBehaviour, signal, () => structuredClone(this.todos.get(sessionId) ?? []), {
      not: "todos",
    });
  }

  getMessages(sessionId: string, signal: AbortSignal, limit?: number): Promise<SessionMessage[]> {
    this.calls.messages++;
    return this.behave(
      this.messagesBehaviour,
      signal,
      () => {
        const list = this.messages.get(sessionId) ?? [];
        return structuredClone(limit ? list.slice(-limit) : list);
      },
      "garbage",
    );
  }

  async getSession(sessionId: string): Promise<HostSession | undefined> {
    const parent = [...this.children].find(([, kids]) => kids.includes(sessionId))?.[0];
    return this.sessions.get(sessionId) ?? { id: sessionId, ...(parent ? { parentId: parent } : {}) };
  }

  async getChildren(sessionId: string): Promise<HostSession[]> {
    return (this.children.get(sessionId) ?? []).map((id) => ({ id, parentId: sessionId }));
  }

  getStatuses(signal: AbortSignal): Promise<Record<string, SessionStatus>> {
    return this.behave(this.statusBehaviour, signal, () => ({ ...this.statuses }), "garbage");
  }

  async getAgents(): Promise<HostAgent[]> {
    return this.agents;
  }

  /** What `mayRunCommand` answers, and the requests it was asked. */
  commandVerdict: BashVerdict = { allowed: true };
  readonly commandRequests: Array<{ sessionId: string; agent: string; command: string; project: string }> = [];

  async mayRunCommand(request: {
    sessionId: string;
    agent: string;
    command: string;
    project: string;
  }): Promise<BashVerdict> {
    this.commandRequests.push(request);
    return this.commandVerdict;
  }

  async prompt(request: PromptRequest, signal: AbortSignal): Promise<void> {
    this.calls.prompt++;
    const behaviour = this.promptScript.shift() ?? this.promptDefault;
    if ((behaviour === "hang" && this.hangAccepts) || behaviour === "accept-then-fail") this.accept(request, true);
    await this.behave(behaviour, signal, () => undefined, undefined);
    if (behaviour === "ok" || behaviour === "accept-idle") this.accept(request, behaviour === "ok");
    if (behaviour === "ok") this.onAccepted?.(request);
  }

  private accept(request: PromptRequest, turnStarts: boolean): void {
    this.prompts.push(request);
    this.addUserMessage(request.sessionId, request.text, {
      ...(request.display
        ? {
            parts: [
              { type: "text", text: request.text, synthetic: true },
              { type: "text", text: request.display },
            ],
          }
        : {}),
      ...(request.messageId ? { id: request.messageId } : {}),
      agent: request.agent,
      providerId: request.model?.providerId,
      modelId: request.model?.modelId,
    });
    if (turnStarts && this.autoReply) {
      this.addAssistantMessage(request.sessionId, {
        parts: [
          { type: "tool", tool: "bash", toolStatus: "completed" },
          { type: "text", text: "Worked on it." },
        ],
      });
    }
  }

  async toast(request: ToastRequest): Promise<void> {
    this.toasts.push(request);
  }

  log(level: LogLevel, message: string, extra?: Record<string, unknown>): void {
    this.logs.push({ level, message, extra });
  }
}

/** A host whose session has a user's request and two open todos: what a continuation needs. */
export function hostWithOpenTodos(sessionId: string): FakeHost {
  const host = new FakeHost();
  host.setTodos(sessionId, [
    ["a", "pending"],
    ["b", "pending"],
  ]);
  host.addUserMessage(sessionId, "go");
  return host;
}
