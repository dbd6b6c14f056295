// What a decision reads of one session (statements.ts `sessionState`), built the same from either backend's one row:
// the session's own columns apart, and the other tables' answers beside them, NULL where there is none.
import type { ParkRow, SessionRow } from "./schema.js";
import type { SessionState } from "./types.js";

/** The other tables' answers, as both backends' statement names them beside the session's columns. */
export interface StateColumns {
  pending: boolean;
  parkId: string | null;
  parkReason: ParkRow["reason"] | null;
  parkWakeAt: number | null;
  armedId: string | null;
  armedOwner: string | null;
  armedLeaseUntil: number | null;
  userCancelledAt: number | null;
  answeredId: string | null;
  answeredAt: number | null;
}

/** The state, with only the facts that hold as keys: a session with no park has no `park`. */
export function sessionStateOf(row: SessionRow | undefined, c: StateColumns): SessionState {
  const state: SessionState = { row, pending: c.pending };
  if (c.parkId !== null && c.parkReason !== null && c.parkWakeAt !== null)
    state.park = { id: c.parkId, reason: c.parkReason, wakeAt: c.parkWakeAt };
  if (c.armedId !== null) state.armed = { id: c.armedId, owner: c.armedOwner, leaseUntil: c.armedLeaseUntil };
  if (c.userCancelledAt !== null) state.userCancelledAt = c.userCancelledAt;
  if (c.answeredId !== null && c.answeredAt !== null)
    state.answeredBy = { injectionId: c.answeredId, firedAt: c.answeredAt };
  return state;
}

const STATE_KEYS = [
  "pending",
  "parkId",
  "parkReason",
  "parkWakeAt",
  "armedId",
  "armedOwner",
  "armedLeaseUntil",
  "userCancelledAt",
  "answeredId",
  "answeredAt",
] as const satisfies ReadonlyArray<keyof StateColumns>;

/**
 * The statement's one row split in two: the session's own columns (undefined when it has no row: its key is NULL),
 * and the state's.
 */
export function splitStateRow(found: Record<string, unknown>): {
  row: Record<string, unknown> | undefined;
  columns: StateColumns;
} {
  const row = { ...found };
  const columns: Record<string, unknown> = {};
  for (const key of STATE_KEYS) {
    columns[key] = found[key] ?? null;
    delete row[key];
  }
  return { row: row.sessionId === null ? undefined : row, columns: columns as unknown as StateColumns };
}
