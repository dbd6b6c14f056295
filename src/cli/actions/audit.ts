import { auditTrail } from "../../store/operator/queries.js";
import { databasePath, nothingFound, openForReading, query } from "../database.js";
import { localTime, table } from "../format.js";
import { print, printJson, type GlobalOptions } from "../output.js";

export interface AuditOptions {
  session?: string;
  reason?: string;
  event?: string;
  since?: number;
  limit: number;
}

function compactDetail(detail: string | null): string {
  if (!detail) return "";
  try {
    const parsed = JSON.parse(detail) as Record<string, unknown>;
    return Object.entries(parsed)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : String(v)}`)
      .join(" ");
  } catch {
    return detail;
  }
}

export async function audit(options: AuditOptions, { db, json }: GlobalOptions): Promise<void> {
  const store = await openForReading(databasePath(db));
  try {
    const since = options.since === undefined ? undefined : Date.now() - options.since;
    const rows = await query(() => auditTrail(store.reader, { ...options, since }));
    if (json)
      return printJson(rows.map((r) => ({ ...r, detail: r.detail ? (JSON.parse(r.detail) as unknown) : null })));
    if (rows.length === 0) return print(await nothingFound(store, db, options.session, "no matching decisions"));
    print(
      table(
        [
          { header: "TIME", value: (r) => localTime(r.at) },
          { header: "SESSION", value: (r) => r.session_id ?? "" },
          { header: "EVENT", value: (r) => r.event },
          { header: "REASON", value: (r) => r.reason ?? "" },
          { header: "DETAIL", value: (r) => compactDetail(r.detail), max: 90 },
        ],
        rows,
      ),
    );
  } finally {
    await store.close();
  }
}
