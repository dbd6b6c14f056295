// One e2e world: a scripted model, a real OpenCode server with the plugin, and read access to the plugin's SQLite
// file. Tests wait on rows of that file (what the plugin decided) and on what the model received.
import Database from "better-sqlite3";
import { isPostgresUrl } from "../../../src/store/open.js";
import { pgRows } from "../../support/test-database.js";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OpenCodeServer, type ServerOptions } from "./opencode-server.js";
import { ScriptedModel, textOf, type ModelRequest, type Script } from "./scripted-model.js";

export const HEADER = "[SYSTEM REMINDER - TODO CONTINUATION]";

export interface AuditRow {
  at: number;
  session_id: string;
  event: string;
  reason: string | null;
  detail: Record<string, unknown>;
}

/** What could still make the enforcer act for a session without a new event (see `E2E.restState`). */
export interface RestState {
  armed: number;
  pending: number;
  recheckAt: number | null;
  /** The last audit row, `event[:reason]`. */
  last: string | null;
}

export class E2E {
  readonly root = mkdtempSync(join(tmpdir(), "tc-e2e-"));
  /** The plugin's database: the `databasePath` option when a test sets one, else a file in the world's folder. */
  get dbPath(): string {
    const given = this.pluginOptions === false ? undefined : this.pluginOptions.databasePath;
    return typeof given === "string" ? given : join(this.root, "todo-continuation.db");
  }
  readonly model: ScriptedModel;
  server!: OpenCodeServer;
  private modelUrl = "";
  private db: Database.Database | undefined;

  constructor(
    script: Script,
    private readonly pluginOptions: Record<string, unknown> | false = {},
    private extra: Partial<ServerOptions> = {},
  ) {
    this.model = new ScriptedModel(script);
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

  async stop(): Promise<void> {
    await this.server?.stop();
    await this.model.stop();
    this.db?.close();
    rmSync(this.root, { recursive: true, force: true });
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

  /**
   * A read-only connection to the plugin's file, opened afresh for each look: one kept across a crash of OpenCode can
   * go on showing the file as it was before the crash.
   */
  private database(): Database.Database | undefined {
    this.db?.close();
    this.db = existsSync(this.dbPath) ? new Database(this.dbPath, { readonly: true, fileMustExist: true }) : undefined;
    return this.db;
  }

  /** Rows of the plugin's database: its SQLite file, or its PostgreSQL database. */
  private select<T>(sql: string, ...params: unknown[]): T[] {
    if (isPostgresUrl(this.dbPath)) return pgRows(this.dbPath).all<T>(sql, ...params);
    return (this.database()
      ?.prepare(sql)
      .all(...params) ?? []) as T[];
  }

  audit(sessionId: string): AuditRow[] {
    const rows = this.select<Omit<AuditRow, "detail"> & { detail: string }>(
      "SELECT at, session_id, event, reason, detail FROM audit_events WHERE session_id = ? ORDER BY id",
      sessionId,
    );
    return rows.map((r) => ({ ...r, detail: JSON.parse(r.detail) as Record<string, unknown> }));
  }

  trail(sessionId: string): string[] {
    return this.audit(sessionId).map((r) => (r.reason ? `${r.event}:${r.reason}` : r.event));
  }

  /** The bills of a session's continuations (`continuation_bills`), oldest first. */
  bills(sessionId: string): Array<Record<string, unknown> & { message_id: string; cost: number; tokens: number }> {
    return this.select("SELECT * FROM continuation_bills WHERE session_id = ? ORDER BY continued_at", sessionId);
  }

  injections(sessionId: string): Array<Record<string, unknown>> {
    return this.select("SELECT * FROM injections WHERE session_id = ? ORDER BY created_at", sessionId);
  }

  countdowns(sessionId: string): Array<Record<string, unknown>> {
    return this.select("SELECT * FROM countdowns WHERE session_id = ? ORDER BY armed_at", sessionId);
  }

  /**
   * What could still make the enforcer act for the session without a new event from OpenCode, read in one statement:
   * countdowns armed, continuations `pending`, a look owed (`sessions.recheck_at`), and the last audit row.
   */
  restState(sessionId: string): RestState {
    const [row] = this.select<{ armed: number; pending: number; recheck_at: number | null; last: string | null }>(
      `SELECT (SELECT count(*) FROM countdowns WHERE session_id = ? AND state = 'armed') AS armed,
              (SELECT count(*) FROM injections WHERE session_id = ? AND status = 'pending') AS pending,
              (SELECT recheck_at FROM sessions WHERE session_id = ?) AS recheck_at,
              (SELECT event || coalesce(':' || reason, '') FROM audit_events WHERE session_id = ?
                ORDER BY id DESC LIMIT 1) AS last`,
      sessionId,
      sessionId,
      sessionId,
      sessionId,
    );
    return {
      armed: Number(row?.armed ?? 0),
      pending: Number(row?.pending ?? 0),
      recheckAt: row?.recheck_at == null ? null : Number(row.recheck_at),
      last: row?.last ?? null,
    };
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
  async waitForRest(sessionId: string, closing: string, timeoutMs = 20_000): Promise<string[]> {
    let state: RestState | undefined;
    await this.waitFor(
      () =>
        `the enforcer at rest for ${sessionId} after ${closing} (now ${JSON.stringify(state)}; trail so far: ${this.trail(sessionId).join(", ")})`,
      async () => {
        state = this.restState(sessionId);
        const rest = state.last === closing && state.armed === 0 && state.pending === 0 && state.recheckAt === null;
        return rest && (await this.sessionIdle(sessionId));
      },
      timeoutMs,
    );
    return this.trail(sessionId);
  }

  /** Model calls of one session's scenario that carried a continuation prompt. */
  continuationRequests(scenario: string): ModelRequest[] {
    return this.model
      .agentRequests()
      .filter(
        (r) =>
          scenarioOf(r) === scenario &&
          textOf(lastUser(r)?.content).includes(HEADER) &&
          r.messages.at(-1)?.role === "user",
      );
  }

  requestsFor(scenario: string): ModelRequest[] {
    return this.model.agentRequests().filter((r) => scenarioOf(r) === scenario);
  }

  /** Polls `probe` every 50 ms until it gives a value; `what` (or what it returns at the timeout) names the wait. */
  async waitFor<T>(
    what: string | (() => string),
    probe: () => T | undefined | false | Promise<T | undefined | false>,
    timeoutMs = 20_000,
  ): Promise<T> {
    const started = Date.now();
    for (;;) {
      const value = await probe();
      if (value) return value;
      if (Date.now() - started > timeoutMs) {
        const name = typeof what === "string" ? what : what();
        throw new Error(
          `timed out after ${timeoutMs} ms waiting for ${name}\nserver log tail:\n${this.server.output().slice(-3000)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
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

export function lastUser(request: ModelRequest) {
  return [...request.messages].reverse().find((m) => m.role === "user");
}

/** The scenario named in the conversation's first user message that names one (after a compaction, a later one). */
export function scenarioOf(request: ModelRequest): string | undefined {
  for (const message of request.messages) {
    if (message.role !== "user") continue;
    const name = /scenario: ([\w-]+)/.exec(textOf(message.content))?.[1];
    if (name) return name;
  }
  return undefined;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
