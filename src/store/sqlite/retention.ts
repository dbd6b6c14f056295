// Deleting old history in small batches, each its own short IMMEDIATE transaction, with a pause between batches so
// that a running plugin (which writes on every decision) waits a few milliseconds at most.
import type { RawDatabase } from "./open.js";

export interface PruneOptions {
  /** Rows older than this (epoch ms) go. */
  cutoff: number;
  batchSize?: number;
  pauseMs?: number;
  dryRun?: boolean;
}

export interface PruneReport {
  auditEvents: number;
  countdowns: number;
  injections: number;
  sessions: number;
  batches: number;
  /** The longest single batch: how long a concurrent writer could have waited for the lock. */
  longestBatchMs: number;
  medianBatchMs: number;
}

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
  const report: PruneReport = {
    auditEvents: 0,
    countdowns: 0,
    injections: 0,
    sessions: 0,
    batches: 0,
    longestBatchMs: 0,
    medianBatchMs: 0,
  };
  const durations: number[] = [];
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
      const elapsed = performance.now() - started;
      durations.push(elapsed);
      report.longestBatchMs = Math.max(report.longestBatchMs, elapsed);
      report.batches++;
      report[target.key] += changes;
      if (changes < batchSize) break;
      await sleep(pauseMs);
    }
  }
  durations.sort((a, b) => a - b);
  report.medianBatchMs = durations.length ? durations[Math.floor(durations.length / 2)]! : 0;
  return report;
}
