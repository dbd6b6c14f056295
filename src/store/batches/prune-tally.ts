// What a prune reports, on both backends: rows deleted per table, and how long each batch held its locks.
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
  parks: number;
  injections: number;
  sessions: number;
  bills: number;
  notices: number;
  verifications: number;
  batches: number;
  /** The longest single batch: how long a concurrent writer could have waited for the lock. */
  longestBatchMs: number;
  medianBatchMs: number;
}

export type PrunedTable =
  "auditEvents" | "countdowns" | "parks" | "injections" | "sessions" | "bills" | "notices" | "verifications";

export class PruneTally {
  readonly report: PruneReport = {
    auditEvents: 0,
    countdowns: 0,
    parks: 0,
    injections: 0,
    sessions: 0,
    bills: 0,
    notices: 0,
    verifications: 0,
    batches: 0,
    longestBatchMs: 0,
    medianBatchMs: 0,
  };
  private readonly durations: number[] = [];

  batch(table: PrunedTable, deleted: number, elapsedMs: number): void {
    this.durations.push(elapsedMs);
    this.report.longestBatchMs = Math.max(this.report.longestBatchMs, elapsedMs);
    this.report.batches++;
    this.report[table] += deleted;
  }

  finish(): PruneReport {
    const sorted = [...this.durations].sort((a, b) => a - b);
    this.report.medianBatchMs = sorted.length ? sorted[Math.floor(sorted.length / 2)]! : 0;
    return this.report;
  }
}
