// The smallest continuation client, through the same SDK calls the service makes: it follows each server's event
// stream and, when a session goes idle with open todos, prompts it once. Tests use it to drive simulated servers
// without the whole service; a test that wants doubles or losses tells it to prompt twice or to skip sessions.
import { createOpencodeClient, type OpencodeClient } from "@opencode-ai/sdk";
import PQueue from "p-queue";
import { newMessageId } from "../../../src/engine/ids.js";
import type { SimServerInfo } from "./fleet.js";

export interface TinyClientOptions {
  /** Prompts per idle with open todos (default 1; 2 makes doubles). */
  promptsPerIdle?: number;
  /** Sessions never prompted (their work is lost). */
  skip?: (sessionId: string) => boolean;
  /** Sessions continued at once, over all servers (default 64): each holds a connection. */
  concurrency?: number;
}

export class TinyClient {
  private readonly abort = new AbortController();
  private readonly follows: Array<Promise<void>> = [];
  readonly failures: string[] = [];
  private connected = 0;
  private readonly queue: PQueue;

  constructor(
    private readonly servers: SimServerInfo[],
    private readonly options: TinyClientOptions = {},
  ) {
    this.queue = new PQueue({ concurrency: options.concurrency ?? 64 });
  }

  /** Resolves once every server's event stream delivered `server.connected`. */
  async start(): Promise<void> {
    let ready!: () => void;
    const allConnected = new Promise<void>((resolve) => (ready = resolve));
    for (const server of this.servers) {
      const client = createOpencodeClient({ baseUrl: server.url, directory: server.directory });
      this.follows.push(this.follow(client, server, () => ++this.connected === this.servers.length && ready()));
    }
    await allConnected;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all(this.follows);
  }

  private async follow(client: OpencodeClient, server: SimServerInfo, connected: () => void): Promise<void> {
    const query = { directory: server.directory };
    try {
      const events = await client.event.subscribe({ signal: this.abort.signal, sseMaxRetryAttempts: 1 });
      for await (const event of events.stream as AsyncIterable<{ type: string; properties: Record<string, unknown> }>) {
        if (event.type === "server.connected") connected();
        if (event.type !== "session.idle") continue;
        const id = event.properties.sessionID as string;
        if (this.options.skip?.(id)) continue;
        void this.queue.add(() => this.continueSession(client, id, query));
      }
    } catch (error) {
      if (!this.abort.signal.aborted) this.failures.push(`${server.name}: ${String(error)}`);
    }
  }

  private async continueSession(client: OpencodeClient, id: string, query: { directory: string }): Promise<void> {
    try {
      const todos = await client.session.todo({ path: { id }, query, throwOnError: true });
      if (!(todos.data as Array<{ status: string }>).some((t) => t.status !== "completed")) return;
      for (let i = 0; i < (this.options.promptsPerIdle ?? 1); i++)
        await client.session.promptAsync({
          path: { id },
          query,
          body: { messageID: newMessageId(), parts: [{ type: "text", text: "Continue." }] } as never,
          throwOnError: true,
        });
    } catch (error) {
      if (!this.abort.signal.aborted) this.failures.push(`${id}: ${String(error)}`);
    }
  }
}
