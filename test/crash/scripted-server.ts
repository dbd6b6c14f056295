// A scripted OpenCode shared by engine processes that come and go: an HTTP server in the test process that keeps
// todos and messages, accepts prompts (recording each one, like OpenCode storing the user message), and can delay
// its answers so that a process killed mid-call leaves a delivered message behind a `pending` row.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface DeliveredPrompt {
  sessionId: string;
  messageId?: string;
  injectionId?: string;
  text: string;
  at: number;
  pid: number;
}

export class ScriptedServer {
  readonly prompts: DeliveredPrompt[] = [];
  /** Calls answered per engine process: how far along its life a process is, whatever the machine's speed. */
  readonly callsBy = new Map<number, number>();
  readonly messages = new Map<
    string,
    Array<{ id: string; role: string; agent?: string; parts: Array<{ type: string; text: string }> }>
  >();
  todos: Array<{ content: string; status: string }> = [
    { content: "first", status: "completed" },
    { content: "second", status: "in_progress" },
    { content: "third", status: "pending" },
  ];
  /** Delay between storing a prompt's message and answering the call. */
  promptLatencyMs = 20;
  /** Called as a prompt is stored, before it is answered: a test may kill its sender there. */
  onPrompt: ((pid: number) => void) | undefined;
  /** Like OpenCode, a prompted session is busy afterwards (here: for good, the model never finishes). */
  busyAfterPrompt = false;
  private readonly busy = new Set<string>();
  private server: Server | undefined;
  private seq = 0;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        void this.handle(JSON.parse(body || "{}") as { method: string; args: unknown[]; pid: number }).then(
          (result) => {
            res.writeHead(200, { "content-type": "application/json" });
            res.end(JSON.stringify({ result: result ?? null }));
          },
          (error: Error) => {
            res.writeHead(500, { "content-type": "application/json" });
            res.end(JSON.stringify({ error: error.message }));
          },
        );
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves once process `pid` made `count` calls, or after `timeoutMs`. */
  async callsFrom(pid: number, count: number, timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    while ((this.callsBy.get(pid) ?? 0) < count && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  private list(sessionId: string) {
    let list = this.messages.get(sessionId);
    if (!list) {
      list = [
        { id: `msg_user_${sessionId}`, role: "user", agent: "build", parts: [{ type: "text", text: "do the work" }] },
      ];
      this.messages.set(sessionId, list);
    }
    return list;
  }

  private async handle({ method, args, pid }: { method: string; args: unknown[]; pid: number }): Promise<unknown> {
    this.callsBy.set(pid, (this.callsBy.get(pid) ?? 0) + 1);
    const sessionId = args[0] as string;
    switch (method) {
      case "getTodos":
        return this.todos;
      case "getMessages":
        return this.list(sessionId).map((m) => ({ ...m, providerId: "scripted", modelId: "model-1" }));
      case "getSession":
        return { id: sessionId };
      case "getChildren":
        return [];
      case "getStatuses":
        return Object.fromEntries([...this.busy].map((id) => [id, "busy"]));
      case "getAgents":
        return [{ name: "build", canWrite: true }];
      case "prompt": {
        const request = args[0] as { sessionId: string; messageId?: string; text: string };
        const injectionId = /\[todo-continuation id=(inj_[A-Za-z0-9_-]+)\]/.exec(request.text)?.[1];
        this.prompts.push({
          sessionId: request.sessionId,
          messageId: request.messageId,
          injectionId,
          text: request.text,
          at: Date.now(),
          pid,
        });
        this.onPrompt?.(pid);
        if (this.busyAfterPrompt) this.busy.add(request.sessionId);
        this.list(request.sessionId).push({
          id: request.messageId ?? `msg_${++this.seq}`,
          role: "user",
          agent: "build",
          parts: [{ type: "text", text: request.text }],
        });
        await new Promise((r) => setTimeout(r, this.promptLatencyMs));
        return null;
      }
      default:
        return null;
    }
  }
}
