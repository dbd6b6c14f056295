// What every PostgreSQL statement is written with: what it runs with, and the pieces of SQL several share.
import { getTableColumns } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { AuditValues } from "../../audit-row.js";
import type { Statements } from "../../statements.js";
import type { Scope } from "../../types.js";
import type { LiveOwners } from "../live-owners.js";
import type { Statement } from "../prepared.js";
import { DB_NOW_MS } from "../rows.js";

/** What a statement runs with, on the pool or in a transaction. */
export interface PgCall {
  /** The rows of the statement's own SQL, `values` bound to $1, $2… */
  rows<T>(values: readonly unknown[]): Promise<T[]>;
  /** The rows of a statement built at the call (retention's, one per table), under its own name. */
  rowsOf<T>(statement: Statement, values: readonly unknown[]): Promise<T[]>;
  /** Owners whose heartbeat was fresh at the last look: a look in a transaction brings it up to date. */
  readonly liveOwners: LiveOwners;
}

/** One statement of ../../statements.ts on PostgreSQL: its SQL, and the code that binds it and reads its rows. */
export interface PgStatement<K extends keyof Statements> {
  /**
   * $1, $2… for its parameters; under node-postgres prepared once per connection, named after the statement. None:
   * it builds its SQL at each call.
   */
  readonly sql?: string;
  run(c: PgCall, ...args: Parameters<Statements[K]>): Promise<ReturnType<Statements[K]>>;
}

/** Some of the statements, each under the name of the one it answers. */
export type SomePg = { readonly [K in keyof Statements]?: PgStatement<K> };

/**
 * A table's columns as the rows' keys, epoch milliseconds as float8 (both drivers give int8 back as text); `alias`:
 * the table's name in a statement that joins others.
 */
export function selectList(table: PgTable, alias?: string): string {
  const of = alias ? `${alias}.` : "";
  return Object.entries(getTableColumns(table) as Record<string, PgColumn>)
    .map(([key, column]) => `${of}${column.name}${column.columnType === "PgBigInt53" ? "::float8" : ""} AS "${key}"`)
    .join(", ");
}

/** The columns a row cannot lack, table by table: a row without one is an answer cut short (rows.ts `whole`). */
export const REQUIRED = {
  session: ["sessionId", "directory", "createdAt", "updatedAt"],
  countdown: ["id", "sessionId", "directory", "armedAt", "deadlineAt", "state"],
  park: ["id", "sessionId", "directory", "reason", "state", "parkedAt", "wakeAt", "since"],
  verification: ["id", "sessionId", "directory", "command", "state", "afterContinuations", "startedAt"],
  injection: ["id", "sessionId", "countdownId", "directory", "createdAt", "status"],
  notice: ["id", "noticeId", "sessionId", "channel", "kind", "createdAt", "body", "state"],
} as const;

export const DB_NOW = DB_NOW_MS;
/** A heartbeat still fresh by the database's clock. */
export const FRESH = `heartbeat_at + lease_ms >= ${DB_NOW}`;

/**
 * A row of any of several scopes ($1: one JSON array of `[directory, server]` pairs, bound as text:
 * ../../statements.ts `scopesAsJson`), what a fleet replica reads for all its servers at once. Its own pair is looked
 * up among them: jsonb equality holds null for null, as a scope's server must, and hashes, so a few hundred scopes cost
 * one lookup a row.
 */
export const IN_SCOPES = "jsonb_build_array(directory, server) IN (SELECT jsonb_array_elements($1::text::jsonb))";

export const AUDIT_COLUMNS = "audit_events (at, session_id, directory, server, event, reason, detail)";
/** One audit row's values, typed: in `INSERT … SELECT` PostgreSQL would take an untyped parameter for text. */
export const auditValues = (n: number) =>
  `$${n}::bigint, $${n + 1}::text, $${n + 2}::text, $${n + 3}::text, $${n + 4}::text, $${n + 5}::text, $${n + 6}::text`;
export const auditParams = (a: AuditValues) => [a.at, a.sessionId, a.directory, a.server, a.event, a.reason, a.detail];

export const scoped = (scope: Scope) => [scope.directory, scope.server ?? null];
/** How long ago `since` was, by the clock both were read from: a span means the same on every host. */
export const ago = (since: number, now: number) => Math.max(0, Math.round(now - since));
