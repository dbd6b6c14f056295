import { injectionHistory } from "../../store/operator/queries.js";
import { openForReading, databasePath, query } from "../database.js";
import { duration, localTime, table } from "../format.js";
import { print, printJson, type GlobalOptions } from "../output.js";

export interface HistoryOptions {
  session?: string;
  limit: number;
}

export async function history(options: HistoryOptions, { db, json }: GlobalOptions): Promise<void> {
  const store = await openForReading(databasePath(db));
  try {
    const rows = await query(() => injectionHistory(store.reader, { session: options.session, limit: options.limit }));
    if (json) return printJson(rows);
    if (rows.length === 0) return print("no continuations recorded yet");
    print(
      table(
        [
          { header: "TIME", value: (r) => localTime(r.created_at) },
          { header: "SESSION", value: (r) => r.session_id },
          { header: "STATUS", value: (r) => r.status },
          { header: "AGENT", value: (r) => r.agent ?? "" },
          { header: "MODEL", value: (r) => r.model ?? "", max: 40 },
          { header: "OPEN", value: (r) => `${r.todos_open}/${r.todos_total}`, align: "right" },
          {
            header: "SENT",
            value: (r) => (r.late_ms === null ? "" : r.late_ms <= 50 ? "on time" : `late by ${duration(r.late_ms)}`),
          },
          { header: "TRY", value: (r) => String(r.attempt + 1), align: "right" },
          { header: "ERROR", value: (r) => r.error ?? "", max: 60 },
        ],
        rows,
      ),
    );
  } finally {
    await store.close();
  }
}
