// What every e2e world has, whichever way it runs OpenCode (a server driven through its API, harness.ts, or its TUI
// driven in tmux, tui.ts): a folder of its own, a scripted model, and read access to the plugin's database. Tests wait
// on rows of that database (what the plugin decided) and on what the model received.
import type { OpencodeClient } from "@opencode-ai/sdk";
import Database from "better-sqlite3";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isPostgresUrl } from "../../../src/store/open/open.js";
import { pgRows } from "../../support/test-database.js";
import { waitFor, type Probe } from "../../support/wait-for.js";
import { ScriptedModel, textOf, type ModelRequest, type Script } from "./scripted-model.js";

export const HEADER = "[SYSTEM REMINDER - TODO CONTINUATION]";

export interface AuditRow {
  at: number;
  session_id: string;
  event: string;
  reason: string | null;
  detail: Record<string, unknown>;
}

/** A row of the notices outbox (`notices`): one per notice and channel. */
export interface NoticeRow {
  id: string;
  notice_id: string;
  session_id: string;
  server: string | null;
  channel: string;
  kind: string;
  reason: string;
  state: string;
  attempts: number;
  created_at: number;
  body: string;
}

/** What could still make an enforcer act for a session without a new event from OpenCode (`World.owed`). */
export interface Owed {
  armed: number;
  pending: number;
  recheckAt: number | null;
  /** The last audit row, `event[:reason]`. */
  last: string | null;
}

export abstract class World {
  readonly root: string;
  readonly model: ScriptedModel;
  /** The plugin's database: a SQLite file, or a PostgreSQL URL. */
  abstract readonly dbPath: string;

  constructor(prefix: string, script: Script) {
    this.root = mkdtempSync(join(tmpdir(), prefix));
    this.model = new ScriptedModel(script);
  }

  /** Stops what the world runs, keeping the model and the folder. */
  protected abstract stopRunning(): Promise<void>;

  /** What a failed wait adds to its message (the server's log, say). */
  protected waitReport(): string {
    return "";
  }

  async stop(): Promise<void> {
    await this.stopRunning();
    await this.model.stop();
    rmSync(this.root, { recursive: true, force: true });
  }

  /** Polls `probe` every 50 ms until it gives a value; `what` (or what it returns at the timeout) names the wait. */
  waitFor<T>(what: string | (() => string), probe: Probe<T>, timeoutMs = 20_000): Promise<T> {
    return waitFor(what, probe, { timeoutMs, report: () => this.waitReport() });
  }

  /**
   * Rows of the plugin's database: its SQLite file, read through a read-only connection opened afresh for each look
   * (one kept across a crash of OpenCode can go on showing the file as it was before the crash), or its PostgreSQL
   * database.
   */
  rows<T = Record<string, unknown>>(sql: string, ...params: unknown[]): T[] {
    if (isPostgresUrl(this.dbPath)) return pgRows(this.dbPath).all<T>(sql, ...params);
    if (!existsSync(this.dbPath)) return [];
    const db = new Database(this.dbPath, { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  }

  audit(sessionId: string): AuditRow[] {
    const rows = this.rows<Omit<AuditRow, "detail"> & { detail: string }>(
      "SELECT at, session_id, event, reason, detail FROM audit_events WHERE session_id = ? ORDER BY id",
      sessionId,
    );
    return rows.map((r) => ({ ...r, detail: JSON.parse(r.detail) as Record<string, unknown> }));
  }

  trail(sessionId: string): string[] {
    return this.audit(sessionId).map((r) => (r.reason ? `${r.event}:${r.reason}` : r.event));
  }

  /**
   * What could still make an enforcer act for the session without a new event from OpenCode, read in one statement:
   * countdowns armed, continuations `pending`, a look owed (`sessions.recheck_at`), and the last audit row; with
   * `deferralsAside`, the last one other than `skipped:in_flight` (an enforcer deferring to another one).
   */
  owed(sessionId: string, deferralsAside = false): Owed {
    const aside = deferralsAside ? "AND NOT (event = 'skipped' AND reason IS 'in_flight')" : "";
    const [row] = this.rows<{ armed: number; pending: number; recheck_at: number | null; last: string | null }>(
      `SELECT (SELECT count(*) FROM countdowns WHERE session_id = ? AND state = 'armed') AS armed,
              (SELECT count(*) FROM injections WHERE session_id = ? AND status = 'pending') AS pending,
              (SELECT recheck_at FROM sessions WHERE session_id = ?) AS recheck_at,
              (SELECT event || coalesce(':' || reason, '') FROM audit_events WHERE session_id = ? ${aside}
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

  /** Model calls whose last message is a continuation prompt (of one session's scenario, when one is named). */
  continuationRequests(scenario?: string): ModelRequest[] {
    return (scenario === undefined ? this.model.agentRequests() : this.requestsFor(scenario)).filter(
      (r) => r.messages.at(-1)?.role === "user" && textOf(r.messages.at(-1)?.content).includes(HEADER),
    );
  }

  /** Model calls of one session's scenario. */
  requestsFor(scenario: string): ModelRequest[] {
    return this.model.agentRequests().filter((r) => scenarioOf(r) === scenario);
  }
}

/**
 * A world whose OpenCode answers its API: a real server (harness.ts) or a simulated one (sim-world.ts). Tests create
 * and prompt sessions through it, and wait for the enforcer at rest, which asks OpenCode whether a session is idle.
 */
export abstract class ApiWorld extends World {
  abstract get client(): OpencodeClient;

  /**
   * The continuations a session of a scenario got, as its host saw them: a real OpenCode's model requests of the
   * scenario that end with one, a simulated OpenCode's prompts of the session after its first.
   */
  abstract continuationsOf(sessionId: string, scenario: string): number;

  /** Whether the scenario's first turn in the session (the one that leaves todos open) is over. */
  abstract firstTurnOver(sessionId: string, scenario: string): boolean;

  /** What OpenCode's log holds, a line each: where the plugin writes (`app.log`). */
  abstract logLines(): string[];

  async session(title = "e2e session", parentID?: string): Promise<string> {
    const created = await this.client.session.create({
      body: { title, ...(parentID ? { parentID } : {}) },
      throwOnError: true,
    });
    return created.data.id;
  }

  async prompt(sessionId: string, text: string, agent?: string): Promise<void> {
    await this.client.session.promptAsync({
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
    const result = await this.client.session.todo({ path: { id: sessionId }, throwOnError: true });
    return result.data as Array<{ content: string; status: string }>;
  }

  async messages(
    sessionId: string,
  ): Promise<Array<{ info: Record<string, unknown>; parts: Array<Record<string, unknown>> }>> {
    const result = await this.client.session.messages({ path: { id: sessionId }, throwOnError: true });
    return result.data as never;
  }

  injections(sessionId: string): Array<Record<string, unknown>> {
    return this.rows("SELECT * FROM injections WHERE session_id = ? ORDER BY created_at", sessionId);
  }

  countdowns(sessionId: string): Array<Record<string, unknown>> {
    return this.rows("SELECT * FROM countdowns WHERE session_id = ? ORDER BY armed_at", sessionId);
  }

  /** Whether OpenCode reports the session idle (not busy, not retrying the provider). */
  async sessionIdle(sessionId: string): Promise<boolean> {
    const statuses = await this.client.session.status({
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

/** The scenario named in the conversation's first user message that names one (after a compaction, a later one). */
export function scenarioOf(request: ModelRequest): string | undefined {
  for (const message of request.messages) {
    if (message.role !== "user") continue;
    const name = /scenario: ([\w-]+)/.exec(textOf(message.content))?.[1];
    if (name) return name;
  }
  return undefined;
}
