// The only way the engine reaches OpenCode. The plugin implements it over its `ctx.client`, the standalone service
// over its own SDK client, tests over a scripted fake. Every method may fail or hang: the engine bounds each call
// with a timeout and treats a failure as "unknown", never as "no".
import type { BashVerdict } from "./bash-permission.js";
import type { Usage } from "../core/fields.js";
import type { SessionMessage } from "../core/messages.js";
import type { SessionStatus } from "../core/events.js";
import type { Todo } from "../core/todos.js";

/** OpenCode answered a call with an HTTP error status: the request reached it and was refused or failed there. */
export class HostHttpError extends Error {
  constructor(
    what: string,
    readonly status: number,
    detail: string,
  ) {
    super(`${what}: HTTP ${status}${detail ? ` ${detail}` : ""}`);
    this.name = "HostHttpError";
  }
}

export interface HostSession {
  id: string;
  parentId?: string;
  directory?: string;
  /** What the session is called in OpenCode's lists (a notice names the session by it). */
  title?: string;
  /** The whole session's spend so far (every step of it), when OpenCode says. */
  spend?: Usage;
}

export interface HostAgent {
  name: string;
  /** False when the agent may neither edit nor write files; undefined when OpenCode does not say. */
  canWrite?: boolean;
}

export interface PromptRequest {
  sessionId: string;
  /** The id OpenCode gives the user message (chosen by the enforcer). */
  messageId?: string;
  /** What the model receives. */
  text: string;
  /**
   * When set, the one line drawn in the transcript: `text` then goes as a synthetic part, which the model receives
   * and the TUI does not draw.
   */
  display?: string;
  agent?: string;
  model?: { providerId: string; modelId: string };
  variant?: string;
}

export interface ToastRequest {
  title?: string;
  message: string;
  variant: "info" | "success" | "warning" | "error";
  durationMs?: number;
}

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface HostPort {
  getTodos(sessionId: string, signal: AbortSignal): Promise<Todo[]>;
  /** Oldest first. `limit` asks for the most recent ones only when the host supports it. */
  getMessages(sessionId: string, signal: AbortSignal, limit?: number): Promise<SessionMessage[]>;
  getSession(sessionId: string, signal: AbortSignal): Promise<HostSession | undefined>;
  getChildren(sessionId: string, signal: AbortSignal): Promise<HostSession[]>;
  /** Status of the sessions that are not idle (OpenCode omits idle ones). */
  getStatuses(signal: AbortSignal): Promise<Record<string, SessionStatus>>;
  getAgents(signal: AbortSignal): Promise<HostAgent[]>;
  /**
   * Whether the session's agent may run `command` in `project` without being asked, by OpenCode's own permission
   * rules (bash-permission.ts): what a park's check is allowed on.
   */
  mayRunCommand(
    request: { sessionId: string; agent: string; command: string; project: string },
    signal: AbortSignal,
  ): Promise<BashVerdict>;
  /**
   * The files' contents now, hashed (`null`: no such file; unreadable ones absent). Optional: a host that cannot read
   * the project's disk leaves a turn's files as its tool calls describe them.
   */
  hashFiles?(paths: readonly string[], signal: AbortSignal): Promise<Record<string, string | null>>;
  /** Queues the prompt and returns once OpenCode accepted it (it does not wait for the agent loop). */
  prompt(request: PromptRequest, signal: AbortSignal): Promise<void>;
  toast(request: ToastRequest): Promise<void>;
  log(level: LogLevel, message: string, extra?: Record<string, unknown>): void;
}
