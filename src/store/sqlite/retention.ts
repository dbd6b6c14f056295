// Deleting old history in small batches, each its own short IMMEDIATE transaction, with a pause between batches so
// that a running plugin (which writes on every decision) waits a few milliseconds at most.
import { PruneTally, type PruneOptions, type PruneReport } from "../prune-tally.js";
import type { RawDatabase } from "./open.js";

export type { PruneOptions, PruneReport } from "../prune-tally.js";

/** What goes, table by table: settled history only; armed countdowns and pending injections are never touched. */
const TARGETS = [
  { key: "auditEvents", table: "audit_events", key_col: "rowid", where: "at < ?" },
  { key: "injections", table: "injections", key_col: "rowid", where: "status <> 'pending' AND created_at < ?" },
  { key: "countdowns", table: "countdowns", key_col: "rowid", where: "state <> 'armed' AND ended_at < ?" },
  // A deleted session's row is kept until its history has aged out with it.
  { key: "sessions", table: "sessions", key_col: "rowid", where: "deleted_at IS NOT NULL AND deleted_at < ?" },
] as const;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function prune(raw: RawDatabase, options: PruneOptions): Promise<PruneReport> {
  const batchSize = options.batchSize ?? 500;
  const pauseMs = options.pauseMs ?? 5;
  const tally = new PruneTally();
  const report = tally.report;
  for (const target of TARGETS) {
    if (options.dryRun) {
      report[target.key] = raw.all<{ n: number }>(
        `SELECT count(*) AS n FROM ${target.table} WHERE ${target.where}`,
        options.cutoff,
      )[0]!.n;
      continue;
    }
    for (;;) {
      const started = performance.now();
      raw.exec("BEGIN IMMEDIATE");
      let changes: number;
      try {
        changes = raw.run(
          `DELETE FROM ${target.table} WHERE ${target.key_col} IN (SELECT ${target.key_col} FROM ${target.table} WHERE ${target.where} LIMIT ?)`,
          options.cutoff,
          batchSize,
        ).changes;
        raw.exec("COMMIT");
      } catch (error) {
        raw.exec("ROLLBACK");
        throw error;
      }
      tally.batch(target.key, changes, performance.now() - started);
      if (changes < batchSize) break;
      await sleep(pauseMs);
    }
  }
  return tally.finish();
}
