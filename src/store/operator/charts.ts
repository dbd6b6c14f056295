// What the page's pictures read: continuations sent and what their turns cost, per hour or per day from `start`, and
// the sessions stopped by each reason since then. Through the indexes of `injections.created_at`,
// `continuation_bills.recorded_at` and `audit_events (event, reason)`; the buckets are counted in SQL.
import { numeric } from "./queries.js";
import type { Dialect } from "./operator.js";
import type { SqlReader } from "./reader.js";

export interface Series {
  start: number;
  bucketMs: number;
  continuations: number[];
  cost: number[];
}

/** The bucket a time falls in, as a whole number on both databases (SQLite binds a JS number as a real). */
function bucketOf(column: string, dialect: Dialect): string {
  return dialect === "sqlite" ? `CAST((${column} - ?) / ? AS INTEGER)` : `((${column} - ?) / ?)`;
}

export async function activity(
  reader: SqlReader,
  dialect: Dialect,
  window: { start: number; bucketMs: number; buckets: number },
): Promise<Series> {
  const { start, bucketMs, buckets } = window;
  const sent = numeric(
    await reader.all<{ bucket: number; n: number }>(
      `SELECT ${bucketOf("created_at", dialect)} AS bucket, count(*) AS n FROM injections
       WHERE created_at >= ? AND status = 'sent' GROUP BY 1`,
      start,
      bucketMs,
      start,
    ),
  );
  const billed = await reader.all<{ bucket: number | string; cost: number | string | null }>(
    `SELECT ${bucketOf("recorded_at", dialect)} AS bucket, sum(cost) AS cost FROM continuation_bills
     WHERE recorded_at >= ? GROUP BY 1`,
    start,
    bucketMs,
    start,
  );
  const series: Series = { start, bucketMs, continuations: Array(buckets).fill(0), cost: Array(buckets).fill(0) };
  for (const row of sent) if (row.bucket < buckets) series.continuations[row.bucket] = Number(row.n);
  for (const row of billed) {
    const bucket = Number(row.bucket);
    if (bucket < buckets) series.cost[bucket] = Number(row.cost ?? 0);
  }
  return series;
}

/** Since `since`: how many sessions each of `reasons` stopped (a session stopped twice for one reason counts once). */
export async function stopsByReason(
  reader: SqlReader,
  since: number,
  reasons: readonly string[],
): Promise<Array<{ reason: string; sessions: number }>> {
  if (reasons.length === 0) return [];
  return numeric(
    await reader.all<{ reason: string; sessions: number }>(
      `SELECT reason, count(DISTINCT session_id) AS sessions FROM audit_events
       WHERE event = 'skipped' AND reason IN (${reasons.map(() => "?").join(", ")}) AND at >= ?
       GROUP BY reason ORDER BY sessions DESC, reason`,
      ...reasons,
      since,
    ),
  );
}
