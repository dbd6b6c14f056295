// The HostPort over an @opencode-ai/sdk v1 client: the plugin's `ctx.client`, or the standalone service's own.
// OpenCode 1.18.33 answers with shapes newer than the v1 types (see ../shared/notes/opencode-host.md), so every
// answer is read defensively and normalised here; nothing OpenCode-specific leaks into the engine.
import { checkPermission, type BashVerdict } from "./bash-permission.js";
import type { OpencodeClient } from "@opencode-ai/sdk";
import type { SessionStatus } from "../core/events.js";
import { obj, readMessageInfo, readUsage, str, type Json } from "../core/fields.js";
import type { MessagePart, SessionMessage } from "../core/messages.js";
import { normalizeTodos, type Todo } from "../core/todos.js";
import { agentCanWrite } from "./agent-permissions.js";
import { partFiles } from "./turn-files.js";
import { hashFiles } from "./workspace.js";
import {
  HostHttpError,
  type HostAgent,
  type HostPort,
  type HostSession,
  type LogLevel,
  type PromptRequest,
  type ToastRequest,
} from "./port.js";

export const LOG_SERVICE = "todo-continuation";

function part(raw: unknown, directory: string | undefined): MessagePart | undefined {
  const p = obj(raw);
  const type = str(p?.type);
  if (!p || !type) return undefined;
  const files = partFiles(p, directory);
  const usage = type === "step-finish" ? readUsage(p) : undefined;
  return {
    type,
    text: typeof p.text === "string" ? p.text : undefined,
    synthetic: p.synthetic === true ? true : undefined,
    tool: str(p.tool),
    toolStatus: str(obj(p.state)?.status),
    ...(files ? { files } : {}),
    ...(usage ? { usage } : {}),
  };
}

/** `directory`: what a tool's relative file path is relative to (OpenCode's instance directory). */
export function normalizeMessage(raw: unknown, directory?: string): SessionMessage | undefined {
  const item = obj(raw);
  const info = readMessageInfo(item?.info);
  if (!item || !info) return undefined;
  const { sessionId: _sessionId, ...fields } = info;
  const parts = Array.isArray(item.parts) ? item.parts : [];
  return { ...fields, parts: parts.map((p) => part(p, directory)).filter((p): p is MessagePart => p !== undefined) };
}

function session(raw: unknown): HostSession | undefined {
  const s = obj(raw);
  const id = str(s?.id);
  if (!id) return undefined;
  const found: HostSession = { id, parentId: str(s?.parentID), directory: str(s?.directory) };
  const title = str(s?.title);
  if (title) found.title = title;
  const spend = readUsage(s);
  if (spend) found.spend = spend;
  return found;
}

/** The SDK answers `{ data, error }`; with throwOnError it throws a real Error. This keeps both paths honest. */
async function data<T>(call: Promise<unknown>, what: string): Promise<T> {
  const result = obj(await call);
  if (result && result.error !== undefined && result.error !== null) {
    const e = obj(result.error);
    throw new Error(`${what}: ${str(obj(e?.data)?.message) ?? str(e?.name) ?? JSON.stringify(result.error)}`);
  }
  return (result && "data" in result ? result.data : result) as T;
}

export class OpenCodeHost implements HostPort {
  constructor(
    private readonly client: OpencodeClient,
    /** The directory every call is scoped to (the plugin's instance directory), when known. */
    private readonly directory?: string,
    /** Where log lines go; OpenCode's own log (`app.log`) when not given. */
    private readonly logSink?: (level: LogLevel, message: string, extra?: Record<string, unknown>) => void,
  ) {}

  private get query(): Json | undefined {
    return this.directory ? { directory: this.directory } : undefined;
  }

  async getTodos(sessionId: string, signal: AbortSignal): Promise<Todo[]> {
    const raw = await data<unknown>(
      this.client.session.todo({ path: { id: sessionId }, query: this.query, signal, throwOnError: true }),
      "todo read",
    );
    const todos = normalizeTodos(raw);
    if (!todos) throw new Error("todo read: OpenCode answered something that is not a todo list");
    return todos;
  }

  async getMessages(sessionId: string, signal: AbortSignal, limit?: number): Promise<SessionMessage[]> {
    const raw = await data<unknown>(
      this.client.session.messages({
        path: { id: sessionId },
        query: { ...this.query, ...(limit ? { limit } : {}) },
        signal,
        throwOnError: true,
      }),
      "messages read",
    );
    if (!Array.isArray(raw)) throw new Error("messages read: OpenCode answered something that is not a message list");
    return raw.map((m) => normalizeMessage(m, this.directory)).filter((m): m is SessionMessage => m !== undefined);
  }

  hashFiles(paths: readonly string[], signal: AbortSignal): Promise<Record<string, string | null>> {
    return hashFiles(paths, signal);
  }

  async getSession(sessionId: string, signal: AbortSignal): Promise<HostSession | undefined> {
    return session(
      await data<unknown>(
        this.client.session.get({ path: { id: sessionId }, query: this.query, signal, throwOnError: true }),
        "session read",
      ),
    );
  }

  async getChildren(sessionId: string, signal: AbortSignal): Promise<HostSession[]> {
    const raw = await data<unknown>(
      this.client.session.children({ path: { id: sessionId }, query: this.query, signal, throwOnError: true }),
      "children read",
    );
    return Array.isArray(raw) ? raw.map(session).filter((s): s is HostSession => s !== undefined) : [];
  }

  async getStatuses(signal: AbortSignal): Promise<Record<string, SessionStatus>> {
    const raw =
      obj(
        await data<unknown>(
          this.client.session.status({ query: this.query, signal, throwOnError: true }),
          "status read",
        ),
      ) ?? {};
    const statuses: Record<string, SessionStatus> = {};
    for (const [id, value] of Object.entries(raw)) {
      const type = str(obj(value)?.type);
      if (type === "busy" || type === "idle" || type === "retry") statuses[id] = type;
    }
    return statuses;
  }

  async getAgents(signal: AbortSignal): Promise<HostAgent[]> {
    const raw = await data<unknown>(
      this.client.app.agents({ query: this.query, signal, throwOnError: true }),
      "agent list",
    );
    if (!Array.isArray(raw)) return [];
    return raw.flatMap((a) => {
      const name = str(obj(a)?.name);
      return name ? [{ name, canWrite: agentCanWrite(a) }] : [];
    });
  }

  async mayRunCommand(
    request: { sessionId: string; agent: string; command: string; project: string },
    signal: AbortSignal,
  ): Promise<BashVerdict> {
    const [agents, session] = await Promise.all([
      data<unknown>(this.client.app.agents({ query: this.query, signal, throwOnError: true }), "agent list"),
      data<unknown>(
        this.client.session.get({ path: { id: request.sessionId }, query: this.query, signal, throwOnError: true }),
        "session read",
      ),
    ]);
    const agent = Array.isArray(agents) ? agents.find((a) => str(obj(a)?.name) === request.agent) : undefined;
    if (agent === undefined)
      return {
        allowed: false,
        why: `the agent "${request.agent}" is not one OpenCode lists, so its rules are unknown`,
      };
    return checkPermission(agent, request.command, request.project, session);
  }

  async prompt(request: PromptRequest, signal: AbortSignal): Promise<void> {
    const body: Json = {
      // The prompt first: a process that reads the parts as they stream in knows the message for ours at once.
      parts: request.display
        ? [
            { type: "text", text: request.text, synthetic: true },
            { type: "text", text: request.display },
          ]
        : [{ type: "text", text: request.text }],
      ...(request.messageId ? { messageID: request.messageId } : {}),
      ...(request.agent ? { agent: request.agent } : {}),
      ...(request.model ? { model: { providerID: request.model.providerId, modelID: request.model.modelId } } : {}),
      ...(request.variant ? { variant: request.variant } : {}),
    };
    // prompt_async returns once OpenCode has queued the prompt; the synchronous route would block for the whole turn.
    // Without throwOnError the HTTP status survives: a refusal (4xx) and a server failure (5xx) mean different things.
    const result = obj(
      await this.client.session.promptAsync({
        path: { id: request.sessionId },
        query: this.query,
        body: body as never,
        signal,
      }),
    );
    if (result && result.error !== undefined && result.error !== null) {
      const e = obj(result.error);
      const status = (result.response as { status?: number } | undefined)?.status ?? 0;
      throw new HostHttpError(
        "prompt",
        status,
        str(obj(e?.data)?.message) ?? str(e?.name) ?? (typeof result.error === "string" ? result.error : ""),
      );
    }
  }

  async toast(request: ToastRequest): Promise<void> {
    await data<unknown>(
      this.client.tui.showToast({
        query: this.query,
        body: {
          title: request.title,
          message: request.message,
          variant: request.variant,
          // OpenCode answers 400 to a duration that is not a whole number of milliseconds.
          duration: request.durationMs === undefined ? undefined : Math.max(1, Math.round(request.durationMs)),
        },
        throwOnError: true,
      }),
      "toast",
    );
  }

  log(level: LogLevel, message: string, extra?: Record<string, unknown>): void {
    if (this.logSink) return this.logSink(level, message, extra);
    // Fire and forget, never awaited: awaiting the client during plugin init deadlocks OpenCode.
    void Promise.resolve()
      .then(() => this.client.app.log({ query: this.query, body: { service: LOG_SERVICE, level, message, extra } }))
      .catch(() => undefined);
  }
}
