import { injectionHistory } from "../../store/operator/queries.js";
import type { OperatorStore } from "../../store/operator/operator.js";
import { openForReading, databasePath, nothingFound, query } from "../database.js";
import { duration, localTime, table } from "../format.js";
import { print, printJson, type GlobalOptions } from "../output.js";

export interface HistoryOptions {
  session?: string;
  limit: number;
}

/** Why there is no row to show: none yet, none for a session seen, or a session the database never saw. */
function nothingFor(store: OperatorStore, db: string | undefined, session: string | undefined): Promise<string> {
  const nothing =
    session === undefined
      ? "no continuations recorded yet"
      : `no continuations recorded for ${session} yet (\`todo-continuation audit --session ${session}\` shows its decisions)`;
  return nothingFound(store, db, session, nothing);
}

export async function history(options: HistoryOptions, { db, json }: GlobalOptions): Promise<void> {
  const store = await openForReading(databasePath(db));
  try {
    const rows = await query(() => injectionHistory(store.reader, { session: options.session, limit: options.limit }));
    if (json) return printJson(rows);
    if (rows.length === 0) return print(await nothingFor(store, db, options.session));
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
