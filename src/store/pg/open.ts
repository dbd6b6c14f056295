// Connects to PostgreSQL with the driver of the running runtime (Bun's built-in SQL inside OpenCode, node-postgres under
// Node), with timeouts on every statement, lock wait and connection so that a hung server never holds the engine,
// and migrates under an advisory lock.
import { sql, type SQL } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { fileURLToPath } from "node:url";
import { applyPgMigrations, type PgMigrationReport } from "./migrate.js";
import { pgErrorCode, pgProblemOf } from "./problems.js";
import { rowsOf } from "./rows.js";
import { pgSchema, type PgSchema } from "./schema.js";
import { isBun } from "../sqlite/open.js";

export type PgDb = PgDatabase<PgQueryResultHKT, PgSchema>;
export type PgDriverName = "pg" | "bun-sql";

export interface PgConnection {
  db: PgDb;
  /** The URL without its password, for messages. */
  location: string;
  driver: PgDriverName;
  /** What migrating at open did; undefined while the server could not be reached (see `ensureMigrated`). */
  migration: PgMigrationReport | undefined;
  /** Applies the shipped migrations if that has not succeeded yet (a lazy open whose server was down). */
  ensureMigrated(): Promise<void>;
  /** Raw SQL: the rows, whatever the driver's result shape. */
  rows<T = Record<string, unknown>>(query: SQL): Promise<T[]>;
  close(): Promise<void>;
}

export interface PgOpenOptions {
  /** Open without migrating (the CLI's read-only commands). */
  readonly?: boolean;
  /** Longest a statement may run, and a lock be waited for (ms). */
  statementTimeoutMs?: number;
  /** Longest a connection may take to open (ms). */
  connectTimeoutMs?: number;
  /**
   * How long the client itself waits for an answer (ms) before it gives up on the connection, beyond the server's own
   * statement timeout: a server that stops answering altogether. 0: no client-side timer (tests on fake clocks).
   */
  clientTimeoutMs?: number;
  /** Connections in the pool. */
  poolSize?: number;
  migrationsFolder?: string;
  /**
   * Return a connection even when the server cannot be reached now (the plugin: it pauses and probes rather than
   * give up); migrations are then applied by the first `ensureMigrated()` that reaches it.
   */
  lazy?: boolean;
}

export const SHIPPED_PG_MIGRATIONS = fileURLToPath(new URL("../../../migrations-pg", import.meta.url));

export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location.trim());
}

/** The URL as it may be shown: no password. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@]*@/, "//$1:***@");
  }
}

export class PgOpenError extends Error {
  constructor(
    readonly location: string,
    message: string,
    cause?: unknown,
  ) {
    super(`cannot open the todo-continuation database ${location}: ${message}`, { cause });
    this.name = "PgOpenError";
  }
}

async function connect(url: string, options: PgOpenOptions): Promise<{ db: PgDb; end: () => Promise<void> }> {
  const statementTimeout = Math.trunc(options.statementTimeoutMs ?? 5000);
  const connectTimeout = Math.trunc(options.connectTimeoutMs ?? 5000);
  const max = options.poolSize ?? 10;
  // node-postgres counts the wait for a free pooled connection against its connection timeout: a burst of state
  // changes (a thousand sessions going idle at once) queues for longer than a connect takes, and is not an outage.
  const poolWait = Math.max(connectTimeout, 15_000);
  // Server-side limits, sent in the startup packet: a statement or a lock wait longer than these is cancelled by
  // the server itself, and a transaction left open by a vanished client does not hold its locks for ever.
  // A transaction left idle in the middle (its process frozen or cut off) is ended by the server after one timeout,
  // releasing the session lock it held; a lock wait lasts twice that, so that it outlives such a holder rather than
  // pause the enforcer.
  const settings = {
    statement_timeout: statementTimeout * 2,
    lock_timeout: statementTimeout * 2,
    idle_in_transaction_session_timeout: statementTimeout,
    application_name: "todo-continuation",
  };
  if (isBun) {
    const { SQL } = await import("bun");
    const { drizzle } = await import("drizzle-orm/bun-sql");
    const client = new SQL(url, {
      max,
      connectionTimeout: Math.max(1, Math.ceil(connectTimeout / 1000)),
      idleTimeout: 30,
      connection: settings,
    });
    return {
      db: drizzle({ client, schema: pgSchema }) as unknown as PgDb,
      end: () => client.close({ timeout: 1 }),
    };
  }
  const pg = (await import("pg")).default;
  const { drizzle } = await import("drizzle-orm/node-postgres");
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: options.clientTimeoutMs === 0 ? 0 : poolWait,
    idleTimeoutMillis: 30_000,
    // The client side too: a server that stops answering (not only a slow statement) still frees the caller.
    query_timeout: options.clientTimeoutMs ?? statementTimeout * 2 + 1000,
    options: Object.entries(settings)
      .filter(([key]) => key !== "application_name")
      .map(([key, value]) => `-c ${key}=${value}`)
      .join(" "),
    application_name: settings.application_name,
  });
  // A client whose server went away emits 'error': an idle one on the pool, and one checked out for a transaction on
  // itself (the server ends a transaction left idle past its timeout, e.g. while this process was frozen). Unhandled,
  // either would end the process; the query or transaction that uses the client next fails instead, and is reported.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  return { db: drizzle(pool, { schema: pgSchema }) as unknown as PgDb, end: () => pool.end() };
}

export async function openPg(url: string, options: PgOpenOptions = {}): Promise<PgConnection> {
  const location = redactUrl(url);
  let connected: Awaited<ReturnType<typeof connect>>;
  try {
    connected = await connect(url, options);
  } catch (error) {
    throw new PgOpenError(location, describePgFailure(error), error);
  }
  const { db, end } = connected;
  const rows = async <T>(query: SQL) => rowsOf<T>(await db.execute(query));
  const connection: PgConnection = {
    db,
    location,
    driver: isBun ? "bun-sql" : "pg",
    migration: undefined,
    rows,
    close: end,
    async ensureMigrated() {
      if (connection.migration) return;
      connection.migration = options.readonly
        ? { applied: 0, latest: null, shipped: 0 }
        : await applyPgMigrations(db, options.migrationsFolder ?? SHIPPED_PG_MIGRATIONS);
    },
  };
  try {
    await rows(sql`SELECT 1`);
    await connection.ensureMigrated();
    return connection;
  } catch (error) {
    if (options.lazy && pgProblemOf(error) !== undefined) return connection;
    await end().catch(() => {});
    throw new PgOpenError(location, describePgFailure(error), error);
  }
}

function messageChain(error: unknown): string {
  const parts: string[] = [];
  for (let e = error as { message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; depth++) {
    // drizzle wraps the driver's error in "Failed query: <sql> params: …": the driver's own words say what happened.
    const message = typeof e.message === "string" ? e.message.replace(/\s+/g, " ").trim() : "";
    if (message && !message.startsWith("Failed query:") && !parts.includes(message)) parts.push(message);
    e = e.cause as typeof e;
  }
  return parts.join(": ") || String(error);
}

export function describePgFailure(error: unknown): string {
  const code = pgErrorCode(error);
  const text = messageChain(error);
  if (code === "3D000") return `the database does not exist (${text})`;
  if (code === "28P01" || code === "28000") return `the server refused the credentials (${text})`;
  if (code === "25006") return `the server is read-only (${text})`;
  if (/ECONNREFUSED|connection refused/i.test(text)) return `nothing answers at that address (${text})`;
  if (/timeout|timed out/i.test(text)) return `the server did not answer in time (${text})`;
  return text;
}
