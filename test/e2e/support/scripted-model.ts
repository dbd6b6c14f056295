// An OpenAI-compatible chat-completions server on 127.0.0.1 that answers from a script, streaming like a provider
// does (text deltas and tool-call deltas as SSE chunks). Every request is recorded so tests can assert on exactly
// what OpenCode sent the model, continuation prompts included.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface ModelRequest {
  model: string;
  messages: ChatMessage[];
  tools?: Array<{ function: { name: string } }>;
  stream?: boolean;
}

export interface ModelReply {
  text?: string;
  toolCalls?: Array<{ name: string; args: Record<string, unknown> }>;
  /** Wait this long before answering (a slow model keeps the session busy). */
  delayMs?: number;
  /** Answer with this HTTP status and no completion. */
  status?: number;
  /** Response headers of an error answer (`retry-after-ms`, `retry-after`). */
  headers?: Record<string, string>;
  /** The OpenAI error `type` of an error answer (OpenCode retries "server_error" by its text alone). */
  errorType?: string;
  /** What the provider reports it used (OpenAI `usage`, on the last chunk); 10 prompt and 5 completion tokens else. */
  usage?: { prompt: number; completion: number; cached?: number; reasoning?: number };
}

export type Script = (request: ModelRequest, context: ScriptContext) => ModelReply | Promise<ModelReply>;

export interface ScriptContext {
  /** Text of every user message, oldest first. */
  userTexts: string[];
  /** The text of the last message when it is a user message. */
  lastUserText?: string;
  /** True when the last message is a tool result (the model is being called back after a tool ran). */
  afterTool: boolean;
  /** The first user text: scenarios put their name there. */
  firstUserText: string;
}

export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        part && typeof part === "object" && "text" in part ? String((part as { text: unknown }).text) : "",
      )
      .join("\n");
  }
  return "";
}

export class ScriptedModel {
  readonly requests: ModelRequest[] = [];
  private server: Server | undefined;
  private callSeq = 0;

  constructor(public script: Script) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Requests that were not title generation, i.e. the agent's real model calls. */
  agentRequests(): ModelRequest[] {
    return this.requests.filter((r) => !isTitleRequest(r));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = "";
    for await (const chunk of req) body += (chunk as Buffer).toString();
    if (!req.url?.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    const request = JSON.parse(body) as ModelRequest;
    this.requests.push(request);
    let reply: ModelReply;
    try {
      reply = isTitleRequest(request) ? { text: "Scripted session" } : await this.script(request, context(request));
    } catch (error) {
      reply = { status: 500, text: String(error) };
    }
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (reply.status && reply.status >= 400) {
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      res.end(
        JSON.stringify({
          error: { message: reply.text ?? "scripted failure", type: reply.errorType ?? "server_error" },
        }),
      );
      return;
    }
    this.stream(res, request, reply);
  }

  private stream(res: ServerResponse, request: ModelRequest, reply: ModelReply): void {
    const id = `chatcmpl-${++this.callSeq}`;
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: request.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
    if (!request.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id,
          object: "chat.completion",
          created,
          model: request.model,
          choices: [{ index: 0, message: { role: "assistant", content: reply.text ?? "" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    res.write(chunk({ role: "assistant", content: "" }, null));
    if (reply.text) {
      // A few chunks, as a provider streams: each becomes a message.part.delta in OpenCode.
      for (const piece of reply.text.match(/.{1,12}/gs) ?? []) res.write(chunk({ content: piece }, null));
    }
    (reply.toolCalls ?? []).forEach((call, index) => {
      res.write(
        chunk(
          {
            tool_calls: [
              {
                index,
                id: `call_${this.callSeq}_${index}`,
                type: "function",
                function: { name: call.name, arguments: JSON.stringify(call.args) },
              },
            ],
          },
          null,
        ),
      );
    });
    res.write(chunk({}, reply.toolCalls?.length ? "tool_calls" : "stop", { usage: openAiUsage(reply.usage) }));
    res.write("data: [DONE]\n\n");
    res.end();
  }
}

export function isTitleRequest(request: ModelRequest): boolean {
  return request.messages.some((m) => m.role === "system" && textOf(m.content).includes("title generator"));
}

function context(request: ModelRequest): ScriptContext {
  const userTexts = request.messages.filter((m) => m.role === "user").map((m) => textOf(m.content));
  const last = request.messages.at(-1);
  return {
    userTexts,
    firstUserText: userTexts[0] ?? "",
    lastUserText: last?.role === "user" ? textOf(last.content) : undefined,
    afterTool: last?.role === "tool",
  };
}

/** A todowrite tool call, the way a model updates its todo list in OpenCode. */
export function todowrite(todos: Array<[string, string]>): { name: string; args: Record<string, unknown> } {
  return {
    name: "todowrite",
    args: { todos: todos.map(([content, status]) => ({ content, status, priority: "medium" })) },
  };
}

function openAiUsage(usage: ModelReply["usage"] = { prompt: 10, completion: 5 }): Record<string, unknown> {
  return {
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.prompt + usage.completion,
    ...(usage.cached ? { prompt_tokens_details: { cached_tokens: usage.cached } } : {}),
    ...(usage.reasoning ? { completion_tokens_details: { reasoning_tokens: usage.reasoning } } : {}),
  };
}
