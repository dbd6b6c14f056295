// What operators read of the notices outbox: the notices themselves (`todo-continuation notices`) and each channel's
// deliveries at a glance (`doctor`). The same SQL on SQLite and PostgreSQL but for reading a JSON field of the audit.
import type { NoticeState } from "./states.js";
import { numeric } from "../operator/queries.js";
import type { SqlReader } from "../operator/reader.js";

export interface NoticeListRow {
  id: string;
  notice_id: string;
  session_id: string;
  directory: string;
  server: string | null;
  channel: string;
  kind: string;
  reason: string;
  created_at: number;
  /** JSON of the notice as a webhook receives it. */
  body: string;
  state: NoticeState;
  attempts: number;
  next_attempt_at: number;
  owner: string | null;
  lease_until: number | null;
  sent_at: number | null;
  last_error: string | null;
  folded_into: string | null;
  updated_at: number;
}

const COLUMNS =
  "id, notice_id, session_id, directory, server, channel, kind, reason, created_at, body, state, attempts, " +
  "next_attempt_at, owner, lease_until, sent_at, last_error, folded_into, updated_at";

/** The newest `limit` notices (one row per channel), newest first. */
export async function noticeList(
  reader: SqlReader,
  filter: { session?: string; state?: NoticeState; limit: number },
): Promise<NoticeListRow[]> {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if (filter.session) (clauses.push("session_id = ?"), params.push(filter.session));
  if (filter.state) (clauses.push("state = ?"), params.push(filter.state));
  const where = clauses.length ? `WHERE ${clauses.join(" AND ")}` : "";
  const rows = await reader.all<NoticeListRow>(
    `SELECT ${COLUMNS} FROM notices ${where} ORDER BY created_at DESC, id DESC LIMIT ?`,
    ...params,
    filter.limit,
  );
  return numeric(rows).map((r) => ({ ...r, attempts: Number(r.attempts) }));
}

/** One channel's deliveries: its notices by state, its last success and its last failure. */
export interface NoticeChannelState {
  channel: string;
  pending: number;
  sent: number;
  failed: number;
  folded: number;
  last_sent_at: number | null;
  /** The last failure's words, already without secrets ("503 from ntfy.sh"), and when it happened. */
  last_error: string | null;
  last_error_at: number | null;
}

const count = (state: NoticeState) => `sum(CASE WHEN state = '${state}' THEN 1 ELSE 0 END) AS ${state}`;

/**
 * Each channel of `names` and each channel the outbox holds rows of, by name. The last failure is the latest
 * `notice_failed` audit row of the channel, else (the audit pruned) the latest error a notice of it keeps.
 */
export async function noticeChannels(reader: SqlReader, names: readonly string[]): Promise<NoticeChannelState[]> {
  const rows = await reader.all<Record<string, unknown>>(
    `SELECT channel, ${count("pending")}, ${count("sent")}, ${count("failed")}, ${count("folded")},
       max(sent_at) AS last_sent_at
     FROM notices GROUP BY channel`,
  );
  const byName = new Map(rows.map((r) => [String(r.channel), r]));
  const all = [...new Set([...names, ...byName.keys()])];
  return Promise.all(
    all.map(async (channel) => {
      const r = byName.get(channel) ?? {};
      const failure = await lastFailure(reader, channel);
      return {
        channel,
        pending: Number(r.pending ?? 0),
        sent: Number(r.sent ?? 0),
        failed: Number(r.failed ?? 0),
        folded: Number(r.folded ?? 0),
        last_sent_at: r.last_sent_at == null ? null : Number(r.last_sent_at),
        last_error: failure?.error ?? null,
        last_error_at: failure?.at ?? null,
      };
    }),
  );
}

async function lastFailure(reader: SqlReader, channel: string): Promise<{ error: string; at: number } | undefined> {
  const ofChannel =
    reader.dialect === "postgresql" ? "(detail::jsonb ->> 'channel') = ?" : "json_extract(detail, '$.channel') = ?";
  const audited = (
    await reader.all<{ at: number | string; detail: string | null }>(
      `SELECT at, detail FROM audit_events WHERE event = 'notice_failed' AND ${ofChannel} ORDER BY id DESC LIMIT 1`,
      channel,
    )
  )[0];
  if (audited) {
    const error = (JSON.parse(audited.detail ?? "{}") as { error?: unknown }).error;
    return { error: typeof error === "string" ? error : "(no error recorded)", at: Number(audited.at) };
  }
  const kept = (
    await reader.all<{ last_error: string; updated_at: number | string }>(
      "SELECT last_error, updated_at FROM notices WHERE channel = ? AND last_error IS NOT NULL ORDER BY updated_at DESC LIMIT 1",
      channel,
    )
  )[0];
  return kept ? { error: kept.last_error, at: Number(kept.updated_at) } : undefined;
}
