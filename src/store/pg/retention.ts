// Deleting old history on PostgreSQL in small batches, each its own short transaction; rows other transactions have
// locked are skipped rather than waited for (they are not history yet).
import { sql } from "drizzle-orm";
import { PruneTally, type PruneOptions, type PruneReport } from "../prune-tally.js";
import type { PgDb } from "./open.js";
import { rowsOf } from "./rows.js";

const TARGETS = [
  { key: "auditEvents", table: "audit_events", id: "id", where: "at < $1" },
  { key: "injections", table: "injections", id: "id", where: "status <> 'pending' AND created_at < $1" },
  { key: "countdowns", table: "countdowns", id: "id", where: "state <> 'armed' AND ended_at < $1" },
  { key: "sessions", table: "sessions", id: "session_id", where: "deleted_at IS NOT NULL AND deleted_at < $1" },
] as const;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function prunePg(db: PgDb, options: PruneOptions): Promise<PruneReport> {
  const batchSize = Math.trunc(options.batchSize ?? 500);
  const pauseMs = options.pauseMs ?? 5;
  const tally = new PruneTally();
  const report = tally.report;
  const cutoff = Math.trunc(options.cutoff);
  for (const target of TARGETS) {
    const where = sql.raw(target.where.replace("$1", String(cutoff)));
    const table = sql.raw(target.table);
    const id = sql.raw(target.id);
    if (options.dryRun) {
      const rows = rowsOf<{ n: string | number }>(
        await db.execute(sql`SELECT count(*) AS n FROM ${table} WHERE ${where}`),
      );
      report[target.key] = Number(rows[0]?.n ?? 0);
      continue;
    }
    for (;;) {
      const started = performance.now();
      const deleted = rowsOf<{ n: string | number }>(
        await db.execute(sql`WITH gone AS (
          DELETE FROM ${table} WHERE ${id} IN (
            SELECT ${id} FROM ${table} WHERE ${where} LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)
          RETURNING 1)
        SELECT count(*) AS n FROM gone`),
      );
      const changes = Number(deleted[0]?.n ?? 0);
      tally.batch(target.key, changes, performance.now() - started);
      if (changes < batchSize) break;
      await sleep(pauseMs);
    }
  }
  return tally.finish();
}
