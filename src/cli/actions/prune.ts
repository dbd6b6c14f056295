import { prune as pruneHistory } from "../../store/batches/prune-history.js";
import { withStore } from "../database.js";
import { localTime } from "../format.js";
import { print, printJson, snakeCased, type GlobalOptions } from "../output.js";

export interface PruneOptions {
  olderThan: number;
  batch: number;
  dryRun?: boolean;
}

export async function prune(options: PruneOptions, { db, json }: GlobalOptions): Promise<void> {
  const cutoff = Date.now() - options.olderThan;
  const report = await withStore(db, (store) =>
    pruneHistory(store, { cutoff, batchSize: options.batch, dryRun: options.dryRun }),
  );
  if (json) return printJson(snakeCased({ cutoff, dryRun: options.dryRun === true, ...report }));
  const verb = options.dryRun ? "would delete" : "deleted";
  print(
    `${verb} history before ${localTime(cutoff)}: ${report.auditEvents} audit rows, ${report.countdowns} closed countdowns, ` +
      `${report.injections} settled injections, ${report.sessions} deleted sessions, ${report.bills} bills, ` +
      `${report.notices} settled notices, ${report.verifications} ended checks` +
      (options.dryRun
        ? ""
        : ` (${report.batches} batches, median ${report.medianBatchMs.toFixed(1)} ms, longest ${report.longestBatchMs.toFixed(1)} ms)`),
  );
}
