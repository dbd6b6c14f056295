// Retention's one change: a batch of settled history older than a cutoff deleted from one table. What counts as
// settled is written here once: armed countdowns, parks that hold and pending injections are never history, and a bill
// goes with its continuation (it is written after the continuation was created, so both are older than any cutoff the
// bill is).
// batches/prune-history.ts runs the batches, each its own short transaction.
import type { HistoryTable } from "../statements.js";
import { change, q, type Change } from "../script.js";
import type { PrunedTable } from "../batches/prune-tally.js";

/** What goes, table by table (`?` is the cutoff). A deleted session's row stays until its history ages out with it. */
export const SETTLED: ReadonlyArray<{ key: PrunedTable; table: HistoryTable; settled: string }> = [
  { key: "auditEvents", table: "audit_events", settled: "at < ?" },
  { key: "injections", table: "injections", settled: "status <> 'pending' AND created_at < ?" },
  { key: "countdowns", table: "countdowns", settled: "state <> 'armed' AND ended_at < ?" },
  { key: "parks", table: "parks", settled: "state <> 'parked' AND ended_at < ?" },
  { key: "sessions", table: "sessions", settled: "deleted_at IS NOT NULL AND deleted_at < ?" },
  // After the injections: a look that comes between finds the continuation gone and does not bill its turn again.
  { key: "bills", table: "continuation_bills", settled: "recorded_at < ?" },
  // A notice still to be delivered is never history, however old.
  { key: "notices", table: "notices", settled: "state <> 'pending' AND created_at < ?" },
  // A check still running is never history.
  { key: "verifications", table: "verifications", settled: "state <> 'running' AND ended_at < ?" },
];

/** Deletes up to `batchSize` settled rows of one table older than `cutoff`; how many went. */
export function pruneBatch(of: (typeof SETTLED)[number], cutoff: number, batchSize: number): Change<number> {
  return change("prune", undefined, () => q.deleteHistory(of.table, of.settled, cutoff, batchSize));
}
