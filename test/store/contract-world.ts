// The world every case of the store's contract runs in: two connections to a fresh database of one backend (two
// processes' views), each with a live owner's heartbeat, and the rows and times the cases share. The cases live beside
// what they test (changes/arm.cases.ts for src/store/changes/arm.ts…); contract-cases.ts gathers them for the runners
// of every driver. Assertions are node:assert's, so that the same cases run outside vitest (under Bun).
import type { ParkRequest } from "../../src/store/changes/park.js";
import type { OutcomePolicy } from "../../src/store/changes/record-outcome.js";
import type { OpenStoreOptions } from "../../src/store/open/open.js";
import type { OperatorStore } from "../../src/store/operator/operator.js";
import { newRows } from "../support/new-rows.js";

/** A fresh, empty database of one backend. */
export interface ContractDatabase {
  /** Another connection to it: another process's view (a TUI's, with `kind: "tui"`). */
  open(options?: OpenStoreOptions): Promise<OperatorStore>;
}

export interface World {
  a: OperatorStore;
  b: OperatorStore;
  database: ContractDatabase;
  /** Rows matching `from` (`SELECT count(*) FROM <from>`). */
  count(from: string): Promise<number>;
  /** The audit trail (`event:reason`) of one session, in order. */
  trail(sessionId: string): Promise<string[]>;
}

export interface ContractCase {
  name: string;
  run(world: World): Promise<void>;
}

export const NOW = Date.now();
/** A reader's time well after every row a case writes: a look that began at NOW and reads now has seen them all. */
export const LATER = NOW + 600_000;
/** Two processes on other hosts: alive while their leases hold (SQLite) and their heartbeats are fresh (PostgreSQL). */
export const ME = "host-a/1/aaaa";
export const OTHER = "host-b/2/bbbb";
export const { countdown, injection } = newRows(NOW, ME);
export const S1 = { sessionId: "ses_1", directory: "/p" };
/** A park the engine asks for: a provider's limit that lifts in an hour, the time read from its headers. */
export const parkRequest = (id: string, extra: Partial<ParkRequest> = {}): ParkRequest => ({
  id,
  reason: "limit",
  wakeAt: NOW + 3_600_000,
  detail: { source: "headers" },
  ...extra,
});
/**
 * How a park ended (its state, end reason and time), read by its id: no statement reads a park that no longer holds.
 * PostgreSQL's bigint comes back as text.
 */
export async function endOfPark(store: OperatorStore, id: string) {
  const rows = await store.reader.all<{ state: string; endReason: string | null; endedAt: number | string | null }>(
    'SELECT state, end_reason AS "endReason", ended_at AS "endedAt" FROM parks WHERE id = ?',
    id,
  );
  const row = rows[0];
  return row && { ...row, endedAt: row.endedAt === null ? null : Number(row.endedAt) };
}
export const POLICY: OutcomePolicy = { maxRetries: 3, retryBaseMs: 5000, retryMaxMs: 60_000, startTimeoutMs: 10_000 };

export async function withWorld(database: ContractDatabase, run: (world: World) => Promise<void>): Promise<void> {
  const a = await database.open();
  const b = await database.open();
  try {
    await a.heartbeat(ME, 15_000);
    await b.heartbeat(OTHER, 15_000);
    const count = async (from: string) =>
      Number((await a.reader.all<{ n: number | string }>(`SELECT count(*) AS n FROM ${from}`))[0]!.n);
    const trail = async (sessionId: string) =>
      (
        await a.reader.all<{ event: string; reason: string | null }>(
          "SELECT event, reason FROM audit_events WHERE session_id = ? ORDER BY id",
          sessionId,
        )
      ).map((r) => (r.reason ? `${r.event}:${r.reason}` : r.event));
    await run({ a, b, database, count, trail });
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}
