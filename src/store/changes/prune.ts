// Retention: settled history older than a cutoff goes, table by table, in small batches — each its own short
// transaction, with a pause between them, so that a running enforcer (which writes on every decision) waits a few
// milliseconds at most. Armed countdowns and pending injections are never history. A bill goes with its continuation:
// it is written after the continuation was created, so both are older than any cutoff the bill is.
import type { HistoryTable } from "../statements.js";
import { change, q } from "../script.js";
import type { EngineStore } from "../port.js";
import { PruneTally, type PrunedTable, type PruneOptions, type PruneReport } from "../prune-tally.js";

export type { PruneOptions, PruneReport };

/** What goes, table by table (`?` is the cutoff). A deleted session's row stays until its history ages out with it. */
const SETTLED: ReadonlyArray<{ key: PrunedTable; table: HistoryTable; settled: string }> = [
  { key: "auditEvents", table: "audit_events", settled: "at < ?" },
  { key: "injections", table: "injections", settled: "status <> 'pending' AND created_at < ?" },
  { key: "countdowns", table: "countdowns", settled: "state <> 'armed' AND ended_at < ?" },
  { key: "sessions", table: "sessions", settled: "deleted_at IS NOT NULL AND deleted_at < ?" },
  // After the injections: a look that comes between finds the continuation gone and does not bill its turn again.
  { key: "bills", table: "continuation_bills", settled: "recorded_at < ?" },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function prune(store: EngineStore, options: PruneOptions): Promise<PruneReport> {
  const batchSize = Math.trunc(options.batchSize ?? 500);
  const pauseMs = options.pauseMs ?? 5;
  const cutoff = Math.trunc(options.cutoff);
  const tally = new PruneTally();
  for (const { key, table, settled } of SETTLED) {
    if (options.dryRun) {
      tally.report[key] = await store.read(q.countHistory(table, settled, cutoff));
      continue;
    }
    for (;;) {
      const started = performance.now();
      const deleted = await store.change(
        change("prune", undefined, () => q.deleteHistory(table, settled, cutoff, batchSize)),
      );
      tally.batch(key, deleted, performance.now() - started);
      if (deleted < batchSize) break;
      await sleep(pauseMs);
    }
  }
  return tally.finish();
}
