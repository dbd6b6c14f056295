import { continuationCosts, type CostKey, type CostRow } from "../../store/operator/queries.js";
import { databasePath, nothingFound, openForReading, query } from "../database.js";
import { table } from "../format.js";
import { print, printJson, type GlobalOptions } from "../output.js";

export interface CostOptions {
  by?: CostKey;
  since?: number;
  session?: string;
}

const DAY_MS = 86_400_000;

/** The UTC day `ms` ago, as the view names days. */
const dayAgo = (ms: number, now = Date.now()) => new Date(now - ms).toISOString().slice(0, 10);
const money = (n: number) => n.toFixed(n > 0 && n < 0.01 ? 6 : 4);

export async function cost(options: CostOptions, { db, json }: GlobalOptions): Promise<void> {
  const store = await openForReading(databasePath(db));
  try {
    const by = options.by ?? "session";
    const sinceDay = options.since === undefined ? undefined : dayAgo(Math.max(0, options.since - DAY_MS));
    const rows = await query(() => continuationCosts(store.reader, { by, sinceDay, session: options.session }));
    if (json) return printJson(rows.map((r) => (by === "session" ? { ...r, share: share(r) ?? null } : r)));
    if (rows.length === 0) return print(await nothingFound(store, db, options.session, "no continuation billed yet"));
    print(costTable(by, rows));
  } finally {
    await store.close();
  }
}

/** The continuations' part of the whole session's spend; undefined when OpenCode did not report the session's. */
function share(row: CostRow): number | undefined {
  return row.session_cost ? Math.min(1, row.cost / row.session_cost) : undefined;
}

const percent = (n: number | undefined) => (n === undefined ? "" : `${(n * 100).toFixed(n < 0.1 ? 1 : 0)}%`);

function costTable(by: CostKey, rows: CostRow[]): string {
  const total: CostRow = {
    key: "total",
    continuations: 0,
    tokens: 0,
    cost: 0,
    todos_closed: 0,
    files_changed: 0,
    ...(by === "session" ? { session_cost: 0 } : {}),
  };
  for (const r of rows) {
    total.continuations += r.continuations;
    total.tokens += r.tokens;
    total.cost += r.cost;
    total.todos_closed += r.todos_closed;
    total.files_changed += r.files_changed;
    // The total's share only when every session's spend is known.
    if (total.session_cost != null) total.session_cost = r.session_cost ? total.session_cost + r.session_cost : null;
  }
  return table(
    [
      { header: by.toUpperCase(), value: (r) => r.key ?? "(unknown)", max: 40 },
      { header: "CONTINUATIONS", value: (r) => String(r.continuations), align: "right" },
      { header: "TOKENS", value: (r) => String(r.tokens), align: "right" },
      { header: "COST", value: (r) => money(r.cost), align: "right" },
      ...(by === "session"
        ? [{ header: "SHARE", value: (r: CostRow) => percent(share(r)), align: "right" as const }]
        : []),
      { header: "TODOS CLOSED", value: (r) => String(r.todos_closed), align: "right" },
      {
        header: "COST/TODO",
        value: (r) => (r.todos_closed > 0 ? money(r.cost / r.todos_closed) : ""),
        align: "right",
      },
      { header: "FILES CHANGED", value: (r) => String(r.files_changed), align: "right" },
    ],
    [...rows, total],
  );
}
