// One e2e world whose OpenCode is simulated (test/support/sim-opencode, held to the real one by
// test/e2e/sim-opencode.test.ts): for the service's own logic, where a real `opencode serve` would add only its start-up
// and first-prompt CPU. One server; a session's first prompt starts a turn that leaves `todos` todos open, and each
// continuation completes one. The enforcer runs outside it (the built CLI) on the world's database.
import { join } from "node:path";
import { createOpencodeClient, type OpencodeClient } from "@opencode-ai/sdk";
import { startSimFleet, type SimFleet } from "../../support/sim-opencode/fleet.js";
import type { SimServer } from "../../support/sim-opencode/server.js";
import { ApiWorld } from "./world.js";

export interface SimWorldOptions {
  /** Todos the first turn leaves open: the continuations a session needs (default 1). */
  todos?: number;
  /** How long a turn lasts (default 500 ms). */
  turnMs?: number;
  /** The `server.heartbeat` period (default OpenCode's 10 s). */
  heartbeatMs?: number;
  /** OpenCode's `OPENCODE_SERVER_PASSWORD` (the world's client sends it). */
  password?: string;
  /** The enforcer's database: a SQLite file or a PostgreSQL URL (default: a file in the world's folder). */
  databasePath?: string;
}

export class SimWorld extends ApiWorld {
  readonly dbPath: string;
  /** The project directory the server's instance is for (nothing is written there). */
  readonly project: string;
  private fleet: SimFleet | undefined;
  private api: OpencodeClient | undefined;

  constructor(private readonly options: SimWorldOptions = {}) {
    super("tc-sim-e2e-", () => {
      throw new Error("a simulated OpenCode calls no model");
    });
    this.dbPath = options.databasePath ?? join(this.root, "todo-continuation.db");
    this.project = join(this.root, "project");
  }

  get server(): SimServer {
    return this.fleet!.sims[0]!;
  }

  get client(): OpencodeClient {
    return this.api!;
  }

  async start(): Promise<void> {
    const { todos = 1, turnMs = 500, heartbeatMs, password } = this.options;
    this.fleet = await startSimFleet({
      servers: 1,
      sessionsPerServer: 0,
      todosPerSession: todos,
      turnMs,
      heartbeatMs,
      password,
      // Node's own keep-alive time: a real OpenCode's clients do not keep an idle connection longer.
      keepAliveMs: 5000,
      directoryOf: () => this.project,
    });
    const headers = password
      ? { Authorization: `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}` }
      : {};
    this.api = createOpencodeClient({ baseUrl: this.server.url, directory: this.project, headers });
  }

  /** Drops every connection and stops listening, as a killed OpenCode; the sessions stay. */
  async crashServer(): Promise<void> {
    await this.server.close();
  }

  /** Listens again on the same port. */
  async startServer(): Promise<void> {
    await this.server.restart();
  }

  /** The prompts a session took after its first (the test's): its continuations, as the host saw them. */
  continuationsOf(sessionId: string): number {
    return Math.max(0, (this.server.sessions.get(sessionId)?.prompts ?? 0) - 1);
  }

  firstTurnOver(sessionId: string): boolean {
    return this.turnsDone(sessionId) >= 1;
  }

  /** What was sent to the server's log (`app.log`), across its restarts. */
  logLines(): string[] {
    return this.server.logs.map((line) => line.message);
  }

  /**
   * The session goes idle again without a turn: what OpenCode publishes when an idle session is aborted (its
   * `session.idle`, nothing else).
   */
  idleAgain(sessionId: string): void {
    if (this.server.sessions.get(sessionId)?.busy !== false) throw new Error(`${sessionId} is not an idle session`);
    this.server.emit("session.idle", { sessionID: sessionId });
  }

  /** Turns the session has finished. */
  turnsDone(sessionId: string): number {
    return this.server.sessions.get(sessionId)?.turnsDone ?? 0;
  }

  protected async stopRunning(): Promise<void> {
    await this.fleet?.stop();
  }

  protected override waitReport(): string {
    const sessions = [...(this.fleet?.sims[0]?.sessions.values() ?? [])].map(({ facts, prompts, busy, completed }) => ({
      id: facts.id,
      prompts,
      busy,
      completed,
    }));
    return `the simulated server: ${JSON.stringify({ refused: this.fleet?.sims[0]?.refused, sessions })}`;
  }
}
