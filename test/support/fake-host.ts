// A scripted OpenCode for engine tests: it keeps todos, messages, statuses and agents the test sets, records every
// prompt and toast, and can be told to fail or hang. A prompt it accepts becomes a user message carrying the text,
// as in OpenCode, so reconciliation can find it.
import type { SessionStatus } from "../../src/core/events.js";
import type { SessionMessage } from "../../src/core/messages.js";
import type { Todo } from "../../src/core/todos.js";
import type { HostAgent, HostPort, HostSession, LogLevel, PromptRequest, ToastRequest } from "../../src/host/port.js";

export type Behaviour = "ok" | "fail" | "hang" | "garbage";

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
  messagesBehaviour: Behaviour = "ok";
  /** Behaviour of the next prompt calls, consumed in order; then `promptDefault`. */
  promptScript: Behaviour[] = [];
  promptDefault: Behaviour = "ok";
  /** A prompt that "hangs" may still have been accepted by the server. */
  hangAccepts = false;
  calls = { todos: 0, messages: 0, prompt: 0 };
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
    if (behaviour === "fail") throw new Error("scripted host failure");
    if (behaviour === "hang") {
      await new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
    }
    if (behaviour === "garbage") return garbage as T;
    return value();
  }

  getTodos(sessionId: string, signal: AbortSignal): Promise<Todo[]> {
    this.calls.todos++;
    return this.behave(this.todoBehaviour, signal, () => structuredClone(this.todos.get(sessionId) ?? []), { not: "todos" });
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
    return this.sessions.get(sessionId) ?? { id: sessionId };
  }

  async getChildren(sessionId: string): Promise<HostSession[]> {
    return (this.children.get(sessionId) ?? []).map((id) => ({ id, parentId: sessionId }));
  }

  async getStatuses(): Promise<Record<string, SessionStatus>> {
    return { ...this.statuses };
  }

  async getAgents(): Promise<HostAgent[]> {
    return this.agents;
  }

  async prompt(request: PromptRequest, signal: AbortSignal): Promise<void> {
    this.calls.prompt++;
    const behaviour = this.promptScript.shift() ?? this.promptDefault;
    if (behaviour === "hang" && this.hangAccepts) this.accept(request);
    await this.behave(behaviour, signal, () => undefined, undefined);
    if (behaviour === "ok") this.accept(request);
  }

  private accept(request: PromptRequest): void {
    this.prompts.push(request);
    this.addUserMessage(request.sessionId, request.text, {
      ...(request.messageId ? { id: request.messageId } : {}),
      agent: request.agent,
      providerId: request.model?.providerId,
      modelId: request.model?.modelId,
    });
  }

  async toast(request: ToastRequest): Promise<void> {
    this.toasts.push(request);
  }

  log(level: LogLevel, message: string, extra?: Record<string, unknown>): void {
    this.logs.push({ level, message, extra });
  }
}
