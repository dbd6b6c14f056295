// The connections behind a PostgreSQL store, with the driver of the running runtime (Bun's built-in SQL inside
// OpenCode, node-postgres under Node): a pool for plain statements, a connection of its own for the heartbeat, and
// transactions that can open by taking a session's lock. Every statement, lock wait and connection is bounded, so
// that a hung server never holds the engine.
import { sql } from "drizzle-orm";
import type { ClientConfig, Pool, PoolClient } from "pg";
import { isBun } from "../open/runtime.js";
import type { PgConnection, PgDb, PgOpenOptions } from "./connection.js";
import { pgSchema } from "./schema.js";
import { TransactionSlots } from "./transaction-slots.js";
import { boundedClient, type BoundedClient } from "./bun-bounded-client.js";

/** The first key of every session lock ("tc"): keeps them apart from other applications' advisory locks. */
export const SESSION_LOCK_SPACE = 0x7463;

export interface Pools {
  db: PgDb;
  liveness: PgDb;
  transaction: PgConnection["transaction"];
  end: () => Promise<void>;
}

interface Limits {
  connectTimeout: number;
  /** Server-side limits, sent in the startup packet. */
  settings: Record<string, string | number>;
  /** How long a statement or a lock wait may take on the server. */
  lockWait: number;
  /** How long the client waits for any one answer before it gives up on the connection (0: for ever). */
  clientTimeout: number;
  max: number;
}

export function limitsOf(options: PgOpenOptions): Limits {
  const statementTimeout = Math.trunc(options.statementTimeoutMs ?? 5000);
  const idleInTransaction = Math.trunc(options.idleInTransactionMs ?? Math.max(10_000, statementTimeout));
  // A statement or a lock wait longer than these is cancelled by the server itself, and a transaction left open by a
  // vanished client does not hold its locks for ever. A transaction left idle in the middle (its process frozen or
  // cut off) is ended by the server, releasing the session lock it held; a lock wait (itself a statement) lasts
  // twice that, so that it outlives such a holder rather than pause the enforcer. Not shorter than 10 s: a process
  // whose event loop is busy for a few seconds (a burst of sessions going idle, a slow host) is not frozen, and
  // ending its transaction would pause it for nothing.
  const longest = Math.max(statementTimeout, idleInTransaction);
  const lockWait = longest * 2;
  return {
    connectTimeout: Math.trunc(options.connectTimeoutMs ?? 5000),
    settings: {
      statement_timeout: lockWait,
      lock_timeout: lockWait,
      idle_in_transaction_session_timeout: idleInTransaction,
      application_name: "todo-continuation",
    },
    lockWait,
    // The client gives up before the server would (an answer lost on the way, or a server that stopped answering,
    // is found out sooner), yet only after a frozen holder's session lock has been released by the server: a lock
    // wait outlives such a holder rather than pause the enforcer.
    clientTimeout: options.clientTimeoutMs ?? Math.round(longest * 1.5),
    max: options.poolSize ?? 10,
  };
}

export function connect(url: string, options: PgOpenOptions): Promise<Pools> {
  return isBun ? connectBun(url, limitsOf(options)) : connectNode(url, options, limitsOf(options));
}

async function connectBun(url: string, limits: Limits): Promise<Pools> {
  const { SQL } = await import("bun");
  const { drizzle } = await import("drizzle-orm/bun-sql");
  // Every statement is bounded by the client (bun-bounded-client.ts): under a burst of 1,000 idles on four processes
  // a Bun process waited for good on a statement whose answer never came.
  const pool = (size: number) =>
    boundedClient(
      () =>
        new SQL(url, {
          max: size,
          connectionTimeout: Math.max(1, Math.ceil(limits.connectTimeout / 1000)),
          // Idle connections close after 30 s. Bun 1.3.14's idle timer also fails a statement in flight
          // (oven-sh/bun#30646), but the client's own bound gives up on such a statement before that.
          idleTimeout: 30,
          connection: limits.settings,
        }),
      limits.clientTimeout,
    );
  const onPool = (client: BoundedClient) => drizzle({ client: client as never, schema: pgSchema }) as unknown as PgDb;
  // Half the connections for plain statements, half for transactions, each of those on a client of its own
  // (transaction-slots.ts says why).
  const plainSize = Math.max(1, Math.ceil(limits.max / 2));
  const [main, own] = [pool(plainSize), pool(1)];
  const slots = new TransactionSlots<PgDb>(Math.max(1, limits.max - plainSize), () => {
    const client = pool(1);
    return { db: onPool(client), close: () => client.close({ timeout: 1 }) };
  });
  const transaction = <T>(work: (tx: PgDb) => Promise<T>, lockSession?: string) =>
    slots.use((db) =>
      db.transaction(async (tx) => {
        if (lockSession !== undefined)
          await tx.execute(sql`SELECT pg_advisory_xact_lock(${SESSION_LOCK_SPACE}, hashtext(${lockSession}))`);
        return work(tx as unknown as PgDb);
      }),
    );
  return {
    db: onPool(main),
    liveness: onPool(own),
    transaction,
    end: async () => {
      await Promise.all([main.close({ timeout: 1 }), own.close({ timeout: 1 }), slots.close()]);
    },
  };
}

async function connectNode(url: string, options: PgOpenOptions, limits: Limits): Promise<Pools> {
  const pg = (await import("pg")).default;
  const { drizzle } = await import("drizzle-orm/node-postgres");
  // node-postgres's pool applies one timeout both to opening a connection and to waiting for a free one. Waiting is
  // not an outage (a burst of state changes — a thousand sessions going idle at once — queues for as long as the
  // database takes to work through it), so the pool waits without a limit, and each connection bounds its own
  // opening: a server that is down or unreachable still fails within `connectTimeout`.
  const clientConnectTimeout = options.clientTimeoutMs === 0 ? 0 : limits.connectTimeout;
  class BoundedConnect extends pg.Client {
    constructor(config?: ClientConfig) {
      super({ ...config, connectionTimeoutMillis: clientConnectTimeout });
    }
  }
  const { application_name, ...serverSide } = limits.settings;
  const pool = (size: number): Pool => {
    const created = new pg.Pool({
      connectionString: url,
      max: size,
      Client: BoundedConnect,
      connectionTimeoutMillis: 0,
      idleTimeoutMillis: 30_000,
      // The client side too: a server that stops answering (not only a slow statement) still frees the caller.
      // A query given up on fails, and its connection is discarded, never reused (pg-pool ends a client released
      // with an error; nodeTransaction releases it so).
      query_timeout: limits.clientTimeout,
      options: Object.entries(serverSide)
        .map(([key, value]) => `-c ${key}=${value}`)
        .join(" "),
      application_name: String(application_name),
    });
    // A client whose server went away emits 'error': an idle one on the pool, and one checked out for a transaction
    // on itself (the server ends a transaction left idle past its timeout, e.g. while this process was frozen).
    // Unhandled, either would end the process; the query or transaction that uses the client next fails instead.
    created.on("error", () => {});
    created.on("connect", (client) => client.on("error", () => {}));
    return created;
  };
  const [main, own] = [pool(limits.max), pool(1)];
  /** A drizzle instance per pooled connection, made once: a transaction runs its statements on that connection. */
  const onConnection = new WeakMap<PoolClient, PgDb>();
  const on = (client: PoolClient) => {
    let tx = onConnection.get(client);
    if (!tx) onConnection.set(client, (tx = drizzle(client, { schema: pgSchema }) as unknown as PgDb));
    return tx;
  };
  return {
    db: drizzle(main, { schema: pgSchema }) as unknown as PgDb,
    liveness: drizzle(own, { schema: pgSchema }) as unknown as PgDb,
    transaction: (work, lockSession) => nodeTransaction(main, on, work, lockSession),
    end: async () => {
      await Promise.all([main.end(), own.end()]);
    },
  };
}

/**
 * `work` in one transaction on one pooled connection. The session's lock goes out with BEGIN, in one round trip (a
 * simple query of two statements: the session id as a quoted literal, never as SQL). A connection that fails anywhere
 * in it is closed, never returned to the pool.
 */
async function nodeTransaction<T>(
  pool: Pool,
  on: (client: PoolClient) => PgDb,
  work: (tx: PgDb) => Promise<T>,
  lockSession: string | undefined,
): Promise<T> {
  const client = await pool.connect();
  let failure: unknown;
  try {
    await client.query(
      lockSession === undefined
        ? "BEGIN"
        : `BEGIN; SELECT pg_advisory_xact_lock(${SESSION_LOCK_SPACE}, hashtext(${client.escapeLiteral(lockSession)}))`,
    );
    const result = await work(on(client));
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
}
