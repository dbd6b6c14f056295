// The outbox as the contract cases of the notices see it: rows written as a stop's change writes them, a row read back
// whatever its state (the statements read only pending ones), the audit rows of its deliveries, and a claim made once
// another owner's lease ran out — by the clock the case hands in on SQLite, by the database's own on PostgreSQL.
import type { NoticeKind } from "../../src/core/notices.js";
import { claimNotices } from "../../src/store/changes/claim-notices.js";
import type { OperatorStore } from "../../src/store/operator/operator.js";
import type { NoticeRow } from "../../src/store/schema.js";
import { change, q } from "../../src/store/script.js";
import type { NewNotice, Scope } from "../../src/store/types.js";
import { waitFor } from "../support/wait-for.js";
import { NOW } from "./contract-world.js";

/** A notice of ses_1 in /p on the `hook` channel, made at `createdAt` (and due then). */
export function newNotice(id: string, createdAt = NOW, more: Partial<NewNotice> = {}): NewNotice {
  const kind: NoticeKind = "stuck";
  const rest = { channel: "hook", kind, reason: "stagnation", createdAt, body: JSON.stringify({ id }) };
  return { id, noticeId: id, sessionId: "ses_1", directory: "/p", ...rest, ...more };
}

/** Writes notices as a stop's change does, in a transaction of their own. */
export function insertNotices(store: OperatorStore, ...rows: NewNotice[]): Promise<void> {
  return store.change(change("test", undefined, () => q.insertNotices(rows)));
}

export type StoredNotice = Pick<
  NoticeRow,
  "id" | "state" | "attempts" | "nextAttemptAt" | "owner" | "sentAt" | "lastError" | "foldedInto" | "body"
>;

const asNumber = (value: unknown) => (value === null || value === undefined ? null : Number(value));

/** One row of the outbox, whatever its state. */
export async function storedNotice(store: OperatorStore, id: string): Promise<StoredNotice | undefined> {
  const [row] = await store.reader.all<Record<string, unknown>>(
    `SELECT id, state, attempts, next_attempt_at AS "nextAttemptAt", owner, sent_at AS "sentAt",
       last_error AS "lastError", folded_into AS "foldedInto", body FROM notices WHERE id = ?`,
    id,
  );
  if (!row) return undefined;
  return {
    ...(row as unknown as StoredNotice),
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.nextAttemptAt),
    sentAt: asNumber(row.sentAt),
  };
}

/** The audit rows of `event` (`notified`, `notice_failed`), their details read. */
export async function auditedAs(
  store: OperatorStore,
  event: string,
): Promise<Array<{ sessionId: string; reason: string; detail: Record<string, unknown> }>> {
  const rows = await store.reader.all<{ sessionId: string; reason: string; detail: string }>(
    `SELECT session_id AS "sessionId", reason, detail FROM audit_events WHERE event = ? ORDER BY id`,
    event,
  );
  return rows.map((r) => ({ ...r, detail: JSON.parse(r.detail) as Record<string, unknown> }));
}

/**
 * `owner`'s claim on `channels` as soon as it takes something: at once on SQLite (`at` is past the lease), once the
 * database's clock passed the lease on PostgreSQL.
 */
export function claimWhenFree(
  store: OperatorStore,
  channels: readonly string[],
  owner: string,
  at: number,
  scope: Scope = { directory: "/p" },
): Promise<NoticeRow[]> {
  return waitFor(`a claim of ${channels.join(", ")} by ${owner}`, async () => {
    const taken = await store.change(claimNotices(scope, channels, owner, at, 60_000, 10));
    return taken.length > 0 && taken;
  });
}
