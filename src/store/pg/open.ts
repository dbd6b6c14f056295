// Connects to PostgreSQL with the driver of the running runtime (Bun's built-in SQL inside OpenCode, node-postgres under
// Node), with timeouts on every statement, lock wait and connection so that a hung server never holds the engine,
// and migrates under an advisory lock.
import { sql, type SQL } from "drizzle-orm";
import { fileURLToPath } from "node:url";
import { applyPgMigrations } from "./migrate.js";
import type { PgConnection, PgOpenOptions } from "./connection.js";
import { pgErrorCode, pgProblemOf } from "./problems.js";
import { rowsOf } from "./rows.js";
import { connect } from "./pools.js";
import { StoreOpenError } from "../open-error.js";
import { isBun } from "../runtime.js";

export type { PgConnection, PgDb, PgDriverName, PgOpenOptions } from "./connection.js";

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

export async function openPg(url: string, options: PgOpenOptions = {}): Promise<PgConnection> {
  const location = redactUrl(url);
  let connected: Awaited<ReturnType<typeof connect>>;
  try {
    connected = await connect(url, options);
  } catch (error) {
    throw new StoreOpenError(location, describePgFailure(error), error);
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
    throw new StoreOpenError(location, describePgFailure(error), error);
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
