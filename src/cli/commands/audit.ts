import { InvalidArgumentError, type Command } from "commander";
import { didYouMean } from "../../core/nearest.js";
import { AUDIT_EVENTS, AUDIT_VOCABULARY } from "../../core/reasons.js";
import { auditTrail } from "../../store/queries.js";
import { databasePath, openForReading, query } from "../database.js";
import { localTime, table } from "../format.js";
import { durationArg, examples, globals, positiveIntegerArg, print, printJson } from "../output.js";

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

/** Every reason an audit row may carry, whatever its event. */
const REASONS = [...new Set(Object.values(AUDIT_VOCABULARY).flat())].filter((r): r is string => r !== null).sort();

/** A reason the trail never records would only ever match nothing: refused, with the nearest one. */
function reasonArg(value: string): string {
  if (REASONS.includes(value)) return value;
  throw new InvalidArgumentError(
    `no audit row carries that reason${didYouMean(value, REASONS)}. The reasons: ${REASONS.join(", ")}.`,
  );
}

export function registerAudit(program: Command): void {
  program
    .command("audit")
    .addHelpText(
      "after",
      examples(
        "todo-continuation audit --reason stagnation --since 7d",
        "todo-continuation audit --session ses_4f2a… --event skipped --json",
      ),
    )
    .description("every decision (armed, cancelled, skipped, fired, injected, …) with its reason, newest last")
    .option("--session <id>", "only this session")
    .option("--reason <reason>", "only this reason (e.g. stagnation, user_message)", reasonArg)
    .option("--event <event>", `only this event (${AUDIT_EVENTS.join(", ")})`, (v) => {
      if (!(AUDIT_EVENTS as readonly string[]).includes(v))
        throw new InvalidArgumentError(`one of ${AUDIT_EVENTS.join(", ")}${didYouMean(v, AUDIT_EVENTS)}.`);
      return v;
    })
    .option("--since <duration>", "only the last <duration> (e.g. 30m, 12h, 7d)", (v) =>
      durationArg("--since", v, "30m, 12h or 7d"),
    )
    .option("--limit <n>", "how many of the newest to show", (v) => positiveIntegerArg("--limit", v), 100)
    .action(
      async (
        options: { session?: string; reason?: string; event?: string; since?: number; limit: number },
        command: Command,
      ) => {
        const { db, json } = globals(command);
        const store = await openForReading(databasePath(db));
        try {
          const since = options.since === undefined ? undefined : Date.now() - options.since;
          const rows = await query(() => auditTrail(store.reader, { ...options, since }));
          if (json)
            return printJson(rows.map((r) => ({ ...r, detail: r.detail ? (JSON.parse(r.detail) as unknown) : null })));
          if (rows.length === 0) return print("no matching decisions");
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
      },
    );
}
