// An open PostgreSQL database, whichever driver opened it (open.ts): the pools, transactions, and what migrating at
// open did.
import type { SQL } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type { MigrationReport } from "../operator/operator.js";
import type { PgSchema } from "./schema.js";

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
   * every later call waited for ever. With `lockSession`, the transaction first takes that session's lock (see
   * `SESSION_LOCK_SPACE`): changes to one session take turns across processes and hosts.
   */
  transaction<T>(work: (tx: PgDb) => Promise<T>, lockSession?: string): Promise<T>;
  /** The URL without its password, for messages. */
  location: string;
  driver: PgDriverName;
  /** What migrating at open did; undefined while the server could not be reached (see `ensureMigrated`). */
  migration: MigrationReport | undefined;
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
   * twice the larger of the two (ms), and the client gives up before that, after one and a half times it.
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
   * How long the client itself waits for any one answer (ms) before it fails the statement and closes the connection
   * it used (a late answer is never read as the next statement's): a server that stops answering, or an answer the
   * driver lost. Default: see `statementTimeoutMs`. 0: no client-side timer (tests on fake clocks).
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
