// Connects to PostgreSQL with the driver of the running runtime (Bun's built-in SQL inside OpenCode, node-postgres under
// Node), with timeouts on every statement, lock wait and connection so that a hung server never holds the engine,
// and migrates under an advisory lock.
import { sql, type SQL } from "drizzle-orm";
import { fileURLToPath } from "node:url";
import { applyPgMigrations } from "./migrate.js";
import type { PgConnection, PgOpenOptions } from "./connection.js";
import { pgProblemOf } from "./problems.js";
import { rowsOf } from "./rows.js";
import { connect } from "./pools.js";
import { describeDatabaseFailure } from "../open/failure.js";
import { redactUrl } from "../open/location.js";
import { StoreOpenError } from "../open/open-error.js";
import { isBun } from "../open/runtime.js";

export type { PgConnection, PgDb, PgDriverName, PgOpenOptions } from "./connection.js";

export const SHIPPED_PG_MIGRATIONS = fileURLToPath(new URL("../../../migrations-pg", import.meta.url));

export async function openPg(url: string, options: PgOpenOptions = {}): Promise<PgConnection> {
  const location = redactUrl(url);
  let connected: Awaited<ReturnType<typeof connect>>;
  try {
    connected = await connect(url, options);
  } catch (error) {
    throw new StoreOpenError(location, describeDatabaseFailure(error, location), error);
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
    throw new StoreOpenError(location, describeDatabaseFailure(error, location), error);
  }
}
