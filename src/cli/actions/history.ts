import { checkRuns, injectionHistory, type CheckRunRow } from "../../store/operator/queries.js";
import type { OperatorStore } from "../../store/operator/operator.js";
import { openForReading, databasePath, nothingFound, query } from "../database.js";
import { duration, localTime, table } from "../format.js";
import { print, printJson, type GlobalOptions } from "../output.js";

export interface HistoryOptions {
  session?: string;
  limit: number;
  /** The runs of the `verify` command instead of the continuations. */
  checks?: boolean;
}

/** How a run ended, in a word or three: `passed`, `failed: exit 1`, `failed: timed out`, `interrupted`. */
function resultOf(run: CheckRunRow): string {
  if (run.state !== "failed") return run.state;
  const how = run.exit_code === null ? "did not finish" : `exit ${run.exit_code}`;
  return `failed: ${how}${Number(run.repeated) ? " (same as before)" : ""}`;
}

/** The output's last non-empty line: what a failure said, in brief. */
function lastLine(output: string | null): string {
  return (output ?? "").trimEnd().split("\n").at(-1) ?? "";
}

async function checksHistory(store: OperatorStore, options: HistoryOptions, { db, json }: GlobalOptions) {
  const rows = await query(() => checkRuns(store.reader, { session: options.session, limit: options.limit }));
  if (json) return printJson(rows);
  if (rows.length === 0)
    return print(await nothingFound(store, db, options.session, "no run of the verify command recorded"));
  print(
    table(
      [
        { header: "TIME", value: (r) => localTime(r.started_at) },
        { header: "SESSION", value: (r) => r.session_id },
        { header: "COMMAND", value: (r) => r.command, max: 30 },
        { header: "RESULT", value: resultOf },
        { header: "TOOK", value: (r) => (r.duration_ms === null ? "" : duration(r.duration_ms)), align: "right" },
        { header: "LAST LINE", value: (r) => (r.state === "failed" ? lastLine(r.output_tail) : ""), max: 60 },
      ],
      rows,
    ),
  );
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
    if (options.checks) return await checksHistory(store, options, { db, json });
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
