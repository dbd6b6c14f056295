// One e2e world: a real OpenCode server with the plugin, driven through its API, besides what every world has
// (world.ts: the folder, the scripted model, the plugin's database).
import { join } from "node:path";
import type { OpencodeClient } from "@opencode-ai/sdk";
import { OpenCodeServer, type ServerOptions } from "./opencode-server.js";
import type { Script } from "./scripted-model.js";
import { ApiWorld } from "./world.js";

export class E2E extends ApiWorld {
  /** The plugin's database: the `databasePath` option when a test sets one, else a file in the world's folder. */
  get dbPath(): string {
    const given = this.pluginOptions === false ? undefined : this.pluginOptions.databasePath;
    return typeof given === "string" ? given : join(this.root, "todo-continuation.db");
  }
  server!: OpenCodeServer;
  get client(): OpencodeClient {
    return this.server.client;
  }
  private modelUrl = "";

  constructor(
    script: Script,
    private readonly pluginOptions: Record<string, unknown> | false = {},
    private extra: Partial<ServerOptions> = {},
  ) {
    super("tc-e2e-", script);
  }

  async start(): Promise<void> {
    this.modelUrl = await this.model.start();
    await this.startServer();
  }

  /** Starts (or starts again) the server on the same files; `overrides` change how it is started from now on. */
  async startServer(overrides: Partial<ServerOptions> = {}): Promise<void> {
    this.extra = { ...this.extra, ...overrides };
    const plugin = this.pluginOptions === false ? false : { databasePath: this.dbPath, ...this.pluginOptions };
    this.server = new OpenCodeServer({
      root: this.root,
      modelUrl: this.modelUrl,
      pluginOptions: plugin,
      ...this.extra,
    });
    await this.server.start();
  }

  continuationsOf(_sessionId: string, scenario: string): number {
    return this.continuationRequests(scenario).length;
  }

  /** The scenario's opening is a tool call and the model's answer after it: two requests. */
  firstTurnOver(_sessionId: string, scenario: string): boolean {
    return this.requestsFor(scenario).length >= 2;
  }

  logLines(): string[] {
    return this.server.output().split("\n");
  }

  /** SIGKILL to the server's process group, as a crash would. */
  async crashServer(): Promise<void> {
    await this.server.kill("SIGKILL");
  }

  protected async stopRunning(): Promise<void> {
    await this.server?.stop();
  }

  protected override waitReport(): string {
    return `server log tail:\n${this.server.output().slice(-3000)}`;
  }

  /** The bills of a session's continuations (`continuation_bills`), oldest first. */
  bills(sessionId: string): Array<Record<string, unknown> & { message_id: string; cost: number; tokens: number }> {
    return this.rows("SELECT * FROM continuation_bills WHERE session_id = ? ORDER BY continued_at", sessionId);
  }
}
