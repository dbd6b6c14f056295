// Retention: settled history older than a cutoff goes, table by table, in small batches (changes/prune.ts) — each its
// own short transaction, with a pause between them, so that a running enforcer (which writes on every decision) waits
// a few milliseconds at most. A dry run counts what would go.
import { pruneBatch, SETTLED } from "../changes/prune.js";
import type { EngineStore } from "../port.js";
import { PruneTally, type PruneOptions, type PruneReport } from "./prune-tally.js";
import { q } from "../script.js";

export type { PruneOptions, PruneReport };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function prune(store: EngineStore, options: PruneOptions): Promise<PruneReport> {
  const batchSize = Math.trunc(options.batchSize ?? 500);
  const pauseMs = options.pauseMs ?? 5;
  const cutoff = Math.trunc(options.cutoff);
  const tally = new PruneTally();
  for (const table of SETTLED) {
    if (options.dryRun) {
      tally.report[table.key] = await store.read(q.countHistory(table.table, table.settled, cutoff));
      continue;
    }
    for (;;) {
      const started = performance.now();
      const deleted = await store.change(pruneBatch(table, cutoff, batchSize));
      tally.batch(table.key, deleted, performance.now() - started);
      if (deleted < batchSize) break;
      await sleep(pauseMs);
    }
  }
  return tally.finish();
}
