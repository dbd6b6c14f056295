// Connects to PostgreSQL with the driver of the running runtime (Bun's built-in SQL inside OpenCode, node-postgres under
// Node), with timeouts on every statement, lock wait and connection so that a hung server never holds the engine,
// and migrates under an advisory lock.
import { sql, type SQL } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type { ClientConfig, PoolClient } from "pg";
import { fileURLToPath } from "node:url";
import { applyPgMigrations, type PgMigrationReport } from "./migrate.js";
import { pgErrorCode, pgProblemOf } from "./problems.js";
import { rowsOf } from "./rows.js";
import { pgSchema, type PgSchema } from "./schema.js";
import { isBun } from "../sqlite/open.js";
import { TransactionSlots } from "./transaction-slots.js";

export type PgDb = PgDatabase<PgQueryResultHKT, PgSchema>;
export type PgDriverName = "pg" | "bun-sql";

export interface PgConnection {
  db: PgDb;
  /**
   * One connection of its own for the heartbeat: it must never queue behind a burst of state changes, or a busy
   * process would look dead to the others (its lease lapsing while it works) and lose its countdowns to them.
   */
  liveness: PgDb;
  /**
   * `work` in one transaction on one pooled connection. Under node-postgres a connection that fails anywhere in it
   * (BEGIN included) is discarded, never returned to the pool: drizzle's own `transaction()` issues BEGIN outside its
   * try/finally, so a connection the server had ended leaked from the pool for good, and with all of them gone
   * every later call waited for ever.
   */
  transaction<T>(work: (tx: PgDb) => Promise<T>): Promise<T>;
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
  /**
   * With `idleInTransactionMs`, how long a statement may run: the server cancels a statement or a lock wait after
   * twice the larger of the two (ms), and the client gives up a second after that.
   */
  statementTimeoutMs?: number;
  /**
   * How long the server lets a transaction sit idle between two statements before it ends it (ms, default the larger
   * of 10 s and `statementTimeoutMs`): the longest a frozen process holds a session's lock. Long enough for a busy
   * process's event loop to come back.
   */
  idleInTransactionMs?: number;
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

interface Pools {
  db: PgDb;
  liveness: PgDb;
  transaction: PgConnection["transaction"];
  end: () => Promise<void>;
}

async function connect(url: string, options: PgOpenOptions): Promise<Pools> {
  const statementTimeout = Math.trunc(options.statementTimeoutMs ?? 5000);
  const connectTimeout = Math.trunc(options.connectTimeoutMs ?? 5000);
  const idleInTransaction = Math.trunc(options.idleInTransactionMs ?? Math.max(10_000, statementTimeout));
  const max = options.poolSize ?? 10;
  // Server-side limits, sent in the startup packet: a statement or a lock wait longer than these is cancelled by
  // the server itself, and a transaction left open by a vanished client does not hold its locks for ever.
  // A transaction left idle in the middle (its process frozen or cut off) is ended by the server, releasing the
  // session lock it held; a lock wait (itself a statement) lasts twice that, so that it outlives such a holder
  // rather than pause the enforcer. Not shorter than 10 s: a process whose event loop is busy for a few seconds (a
  // burst of sessions going idle, a slow host) is not frozen, and ending its transaction would pause it for nothing.
  const lockWait = Math.max(statementTimeout, idleInTransaction) * 2;
  const settings = {
    statement_timeout: lockWait,
    lock_timeout: lockWait,
    idle_in_transaction_session_timeout: idleInTransaction,
    application_name: "todo-continuation",
  };
  if (isBun) {
    const { SQL } = await import("bun");
    const { drizzle } = await import("drizzle-orm/bun-sql");
    const pool = (size: number) =>
      new SQL(url, {
        max: size,
        connectionTimeout: Math.max(1, Math.ceil(connectTimeout / 1000)),
        // Bun 1.3.14's idle timer also fails a statement in flight (oven-sh/bun#30646), which pauses the enforcer
        // for a few seconds. It stays on: under a burst of 1,000 idles on four processes, without it (0) a Bun
        // process waited for good on a statement whose answer never came (3 runs of 3); with it, that statement
        // fails after 30 s and the enforcer recovers.
        idleTimeout: 30,
        connection: settings,
      });
    const onPool = (client: InstanceType<typeof SQL>) => drizzle({ client, schema: pgSchema }) as unknown as PgDb;
    // Half the connections for plain statements, half for transactions, each of those on a client of its own.
    const plainSize = Math.max(1, Math.ceil(max / 2));
    const [main, own] = [pool(plainSize), pool(1)];
    const slots = new TransactionSlots<PgDb>(Math.max(1, max - plainSize), () => {
      const client = pool(1);
      return { db: onPool(client), close: () => client.close({ timeout: 1 }) };
    });
    return {
      db: onPool(main),
      liveness: onPool(own),
      transaction: (work) => slots.use((db) => db.transaction((tx) => work(tx as unknown as PgDb))),
      end: async () => {
        await Promise.all([main.close({ timeout: 1 }), own.close({ timeout: 1 }), slots.close()]);
      },
    };
  }
  const pg = (await import("pg")).default;
  const { drizzle } = await import("drizzle-orm/node-postgres");
  // node-postgres's pool applies one timeout both to opening a connection and to waiting for a free one. Waiting is
  // not an outage (a burst of state changes — a thousand sessions going idle at once — queues for as long as the
  // database takes to work through it), so the pool waits without a limit, and each connection bounds its own
  // opening: a server that is down or unreachable still fails within `connectTimeout`.
  const clientConnectTimeout = options.clientTimeoutMs === 0 ? 0 : connectTimeout;
  class BoundedConnect extends pg.Client {
    constructor(config?: ClientConfig) {
      super({ ...config, connectionTimeoutMillis: clientConnectTimeout });
    }
  }
  const pool = (size: number) => {
    const created = new pg.Pool({
      connectionString: url,
      max: size,
      Client: BoundedConnect,
      connectionTimeoutMillis: 0,
      idleTimeoutMillis: 30_000,
      // The client side too: a server that stops answering (not only a slow statement) still frees the caller.
      query_timeout: options.clientTimeoutMs ?? lockWait + 1000,
      options: Object.entries(settings)
        .filter(([key]) => key !== "application_name")
        .map(([key, value]) => `-c ${key}=${value}`)
        .join(" "),
      application_name: settings.application_name,
    });
    // A client whose server went away emits 'error': an idle one on the pool, and one checked out for a transaction
    // on itself (the server ends a transaction left idle past its timeout, e.g. while this process was frozen).
    // Unhandled, either would end the process; the query or transaction that uses the client next fails instead.
    created.on("error", () => {});
    created.on("connect", (client) => client.on("error", () => {}));
    return created;
  };
  const [main, own] = [pool(max), pool(1)];
  /** A drizzle instance per pooled connection, made once: a transaction runs its statements on that connection. */
  const onConnection = new WeakMap<PoolClient, PgDb>();
  const transaction = async <T>(work: (tx: PgDb) => Promise<T>): Promise<T> => {
    const client = await main.connect();
    let failure: unknown;
    try {
      let tx = onConnection.get(client);
      if (!tx) onConnection.set(client, (tx = drizzle(client, { schema: pgSchema }) as unknown as PgDb));
      await client.query("BEGIN");
      const result = await work(tx);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      failure = error;
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      // After a failure the connection may be broken (ended by the server, cut off): it is closed, not reused.
      client.release(failure === undefined ? undefined : true);
    }
  };
  return {
    db: drizzle(main, { schema: pgSchema }) as unknown as PgDb,
    liveness: drizzle(own, { schema: pgSchema }) as unknown as PgDb,
    transaction,
    end: async () => {
      await Promise.all([main.end(), own.end()]);
    },
  };
}

export async function openPg(url: string, options: PgOpenOptions = {}): Promise<PgConnection> {
  const location = redactUrl(url);
  let connected: Awaited<ReturnType<typeof connect>>;
  try {
    connected = await connect(url, options);
  } catch (error) {
    throw new PgOpenError(location, describePgFailure(error), error);
  }
  const { db, liveness, transaction, end } = connected;
  const rows = async <T>(query: SQL) => rowsOf<T>(await db.execute(query));
  const connection: PgConnection = {
    db,
    liveness,
    transaction,
    location,
    driver: isBun ? "bun-sql" : "pg",
    migration: undefined,
    rows,
    close: end,
    async ensureMigrated() {
      if (connection.migration) return;
      connection.migration = options.readonly
        ? { applied: 0, latest: null, shipped: 0 }
        : await applyPgMigrations(db, transaction, options.migrationsFolder ?? SHIPPED_PG_MIGRATIONS);
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
