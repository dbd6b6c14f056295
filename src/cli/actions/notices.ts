import { noticeList, type NoticeListRow } from "../../store/notices/queries.js";
import type { NoticeState } from "../../store/notices/states.js";
import { databasePath, openForReading, query } from "../database.js";
import { duration, localTime, table } from "../format.js";
import { print, printJson, type GlobalOptions } from "../output.js";

export interface NoticesOptions {
  session?: string;
  state?: NoticeState;
  limit: number;
}

/** The body as a webhook received it; a body that is not JSON (never written so) is shown as it is. */
function parsedBody(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/** When it went out, or when it is tried next: what a person asks of a notice first. */
function delivery(row: NoticeListRow, now: number): string {
  if (row.state === "sent") return localTime(row.sent_at);
  if (row.state !== "pending") return "";
  const wait = row.next_attempt_at - now;
  return wait > 0 ? `next in ${duration(wait)}` : `due for ${duration(-wait)}`;
}

/** What it said, or why it did not get through. */
function said(row: NoticeListRow): string {
  if (row.last_error && row.state !== "sent") return `error: ${row.last_error}`;
  const body = parsedBody(row.body) as { text?: unknown };
  return typeof body?.text === "string" ? body.text : "";
}

function noneFound(options: NoticesOptions): string {
  const filters = [
    options.session ? `--session ${options.session}` : "",
    options.state ? `--state ${options.state}` : "",
  ].filter(Boolean);
  if (filters.length > 0) return `no notices match ${filters.join(" ")}`;
  return (
    "no notices yet: a stop that needs you (a question, a budget, stuck, done, an error) makes one for each channel " +
    "of the notify option (docs/notifications.md); `todo-continuation doctor` shows the channels configured here"
  );
}

export async function notices(options: NoticesOptions, { db, json }: GlobalOptions): Promise<void> {
  const store = await openForReading(databasePath(db));
  try {
    const rows = await query(() => noticeList(store.reader, options));
    if (json) return printJson(rows.map((r) => ({ ...r, body: parsedBody(r.body) })));
    if (rows.length === 0) return print(noneFound(options));
    const now = Date.now();
    print(
      table(
        [
          { header: "WHEN", value: (r) => localTime(r.created_at) },
          { header: "SESSION", value: (r) => r.session_id },
          { header: "KIND", value: (r) => r.kind },
          { header: "CHANNEL", value: (r) => r.channel },
          { header: "STATE", value: (r) => r.state },
          { header: "TRIES", value: (r) => String(r.attempts), align: "right" },
          { header: "SENT / NEXT", value: (r) => delivery(r, now) },
          { header: "TEXT / LAST ERROR", value: said, max: 80 },
        ],
        rows,
      ),
    );
  } finally {
    await store.close();
  }
}
