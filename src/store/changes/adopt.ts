// Taking over armed countdowns nobody holds any more (this process's after a restart or a pause of its database, or a
// process's whose lease ran out), with the misfire policy's verdict for each (core/resume.ts): kept (re-armed, or due
// at once) and audited `resumed`, or expired. Each is taken only from the owner it was seen with, so of two processes
// adopting the same orphan one wins. One chunk of orphans per change: ../batches/adopt-orphans.ts runs them all.
import type { ResumeAction } from "../../core/resume.js";
import { EXPIRE_REASON, type ResumeReason } from "../../core/reasons.js";
import { auditRow, type AuditValues } from "../audit-row.js";
import type { CountdownRow } from "../schema.js";
import { change, q, type Change } from "../script.js";
import { entryOf } from "./end.js";

/** An armed countdown found without a live owner, and what the misfire policy says of it. */
export interface Orphan {
  countdown: CountdownRow;
  verdict: ResumeAction;
}

export interface Adoption {
  reason: ResumeReason;
  owner: string;
  leaseUntil: number;
  now: number;
  resumeWindowMs: number;
}

/** One transaction's orphans, each taken only from the owner it was seen with; for each, whether it was taken. */
export function adoptChunk(orphans: Orphan[], a: Adoption): Change<boolean[]> {
  return change("adopt", undefined, function* () {
    const taken = new Set<string>();
    for (const [expected, group] of byOwner(orphans)) {
      const kept = group.filter(({ verdict }) => verdict.action !== "expire").map(({ countdown }) => countdown.id);
      const stale = group.filter(({ verdict }) => verdict.action === "expire").map(({ countdown }) => countdown.id);
      if (kept.length > 0) for (const id of yield* q.takeOver(kept, expected, a.owner, a.leaseUntil)) taken.add(id);
      if (stale.length > 0)
        for (const id of yield* q.expireOrphans(stale, expected, EXPIRE_REASON, a.now)) taken.add(id);
    }
    const rows: AuditValues[] = [];
    for (const { countdown, verdict } of orphans) {
      if (!taken.has(countdown.id)) continue;
      const detail = { previousOwner: countdown.owner, deadlineAt: countdown.deadlineAt };
      if (verdict.action === "expire") {
        const expired = { ...detail, lateMs: verdict.lateMs, resumeWindowMs: a.resumeWindowMs };
        rows.push(auditRow(a.now, countdown, entryOf({ expired }).entry, countdown.id));
        continue;
      }
      const timing = verdict.action === "rearm" ? { remainingMs: verdict.remainingMs } : { lateMs: verdict.lateMs };
      const entry = { event: "resumed", reason: a.reason, detail: { ...detail, ...timing } } as const;
      rows.push(auditRow(a.now, countdown, entry, countdown.id));
    }
    if (rows.length > 0) yield* q.auditMany(rows);
    return orphans.map(({ countdown }) => taken.has(countdown.id));
  });
}

/** The orphans by the owner each was seen with: one statement per owner (a handful: none, the gone ones). */
function byOwner(orphans: Orphan[]): Map<string | null, Orphan[]> {
  const groups = new Map<string | null, Orphan[]>();
  for (const orphan of orphans) {
    const group = groups.get(orphan.countdown.owner);
    if (group) group.push(orphan);
    else groups.set(orphan.countdown.owner, [orphan]);
  }
  return groups;
}
