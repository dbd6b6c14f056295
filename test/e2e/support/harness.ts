// One e2e world: a real OpenCode server with the plugin, driven through its API, besides what every world has
// (world.ts: the folder, the scripted model, the plugin's database).
import { join } from "node:path";
import { OpenCodeServer, type ServerOptions } from "./opencode-server.js";
import type { Script } from "./scripted-model.js";
import { World, type AuditRow, type Owed } from "./world.js";

export class E2E extends World {
  /** The plugin's database: the `databasePath` option when a test sets one, else a file in the world's folder. */
  get dbPath(): string {
    const given = this.pluginOptions === false ? undefined : this.pluginOptions.databasePath;
    return typeof given === "string" ? given : join(this.root, "todo-continuation.db");
  }
  server!: OpenCodeServer;
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

  async session(title = "e2e session", parentID?: string): Promise<string> {
    const created = await this.server.client.session.create({
      body: { title, ...(parentID ? { parentID } : {}) },
      throwOnError: true,
    });
    return created.data.id;
  }

  async prompt(sessionId: string, text: string, agent?: string): Promise<void> {
    await this.server.client.session.promptAsync({
      path: { id: sessionId },
      body: { parts: [{ type: "text", text }], ...(agent ? { agent } : {}) },
      throwOnError: true,
    });
  }

  /**
   * A new session running the scripted "basic" scenario, resolved with its id once the plugin has continued it (its
   * `injected` audit row): that OpenCode loaded the plugin, and that the plugin works there.
   */
  async continuedBasicSession(timeoutMs = 60_000): Promise<string> {
    const session = await this.session("basic");
    await this.prompt(session, "scenario: basic");
    await this.waitForAudit(session, "injected", timeoutMs);
    return session;
  }

  async todos(sessionId: string): Promise<Array<{ content: string; status: string }>> {
    const result = await this.server.client.session.todo({ path: { id: sessionId }, throwOnError: true });
    return result.data as Array<{ content: string; status: string }>;
  }

  async messages(
    sessionId: string,
  ): Promise<Array<{ info: Record<string, unknown>; parts: Array<Record<string, unknown>> }>> {
    const result = await this.server.client.session.messages({ path: { id: sessionId }, throwOnError: true });
    return result.data as never;
  }

  /** The bills of a session's continuations (`continuation_bills`), oldest first. */
  bills(sessionId: string): Array<Record<string, unknown> & { message_id: string; cost: number; tokens: number }> {
    return this.rows("SELECT * FROM continuation_bills WHERE session_id = ? ORDER BY continued_at", sessionId);
  }

  injections(sessionId: string): Array<Record<string, unknown>> {
    return this.rows("SELECT * FROM injections WHERE session_id = ? ORDER BY created_at", sessionId);
  }

  countdowns(sessionId: string): Array<Record<string, unknown>> {
    return this.rows("SELECT * FROM countdowns WHERE session_id = ? ORDER BY armed_at", sessionId);
  }

  /** Whether OpenCode reports the session idle (not busy, not retrying the provider). */
  async sessionIdle(sessionId: string): Promise<boolean> {
    const statuses = await this.server.client.session.status({
      throwOnError: true,
      signal: AbortSignal.timeout(10_000),
    });
    const status = (statuses.data as Record<string, { type: string }>)[sessionId];
    return !status || status.type === "idle";
  }

  /**
   * Resolves with the session's audit trail once the enforcer is at rest for it: its last audit row is `closing`, no
   * countdown is armed, no continuation is `pending`, no look is owed (`sessions.recheck_at` is null), and OpenCode
   * reports the session idle. From there nothing can follow without a new event from OpenCode, so a test asserts the
   * whole trail and that no (further) continuation went out at once, instead of sleeping and then looking.
   * With several processes on one database `recheck_at` is one column for all of them (one clears it while another
   * still reads OpenCode): wait first for every process's closing row, then for rest.
   */
  async trailAtRest(sessionId: string, closing: string, timeoutMs = 20_000): Promise<string[]> {
    let state: Owed | undefined;
    await this.waitFor(
      () =>
        `the enforcer at rest for ${sessionId} after ${closing} (now ${JSON.stringify(state)}; trail so far: ${this.trail(sessionId).join(", ")})`,
      async () => {
        state = this.owed(sessionId);
        const rest = state.last === closing && state.armed === 0 && state.pending === 0 && state.recheckAt === null;
        return rest && (await this.sessionIdle(sessionId));
      },
      timeoutMs,
    );
    return this.trail(sessionId);
  }

  /** Resolves when the audit trail of the session has an `event[:reason]` entry (optionally after `from` entries). */
  waitForAudit(sessionId: string, entry: string, timeoutMs = 20_000, from = 0): Promise<AuditRow> {
    return this.waitFor(
      () => `audit ${entry} for ${sessionId} (trail so far: ${this.trail(sessionId).join(", ")})`,
      () => {
        const rows = this.audit(sessionId).slice(from);
        return rows.find((r) => (r.reason ? `${r.event}:${r.reason}` : r.event) === entry || r.event === entry);
      },
      timeoutMs,
    );
  }
}
