// What every e2e world has, whichever way it runs OpenCode (a server driven through its API, harness.ts, or its TUI
// driven in tmux, tui.ts): a folder of its own, a scripted model, and read access to the plugin's database. Tests wait
// on rows of that database (what the plugin decided) and on what the model received.
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

/** The scenario named in the conversation's first user message that names one (after a compaction, a later one). */
export function scenarioOf(request: ModelRequest): string | undefined {
  for (const message of request.messages) {
    if (message.role !== "user") continue;
    const name = /scenario: ([\w-]+)/.exec(textOf(message.content))?.[1];
    if (name) return name;
  }
  return undefined;
}
