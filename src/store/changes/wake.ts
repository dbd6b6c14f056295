// A park ended into a look: its time came, its check passed, or a person woke it. The wake owes the session a look at
// once (`recheck_at`, look-owed.ts), so the engine's way of taking the looks owed judges it through every guard and
// arms a normal countdown; nothing here arms one. It leaves the session a note of why it woke (`wake_note`), which the
// next continuation's prompt carries. The end is written only while the park still holds: of two writers,
// one wakes it.
import type { WakeCause } from "../../core/reasons.js";
import { wokenBecause } from "../../core/wake-note.js";
import { auditRow } from "../audit-row.js";
import type { ParkRow } from "../schema.js";
import { change, q, type Change } from "../script.js";
import type { OwedLook, ParkEnding, SessionScope } from "../types.js";
import { applyChange } from "./change-session.js";
import { lookColumns, owedLookOf } from "./look-owed.js";
import { parkDetail } from "./park.js";

export interface WakeResult {
  woke: boolean;
  /**
   * The park it woke (its row as ended); or, not woken, the park that holds when the cause was not its own: a time not
   * come yet (it was parked again later since the caller's timer was set), a check passed for a park that has none.
   */
  park?: ParkRow;
  /** Woken: the look it owes the session, as the engine's looks owed take it (now, judging no earlier idle). */
  owed?: OwedLook;
}

/** Which park `cause` may end at `now`: a person may wake any park, a time or a check only the park it is for. */
function woken(cause: WakeCause, now: number): ParkEnding {
  if (cause === "time") return { dueBy: now };
  if (cause === "check") return { withCheck: true };
  return {};
}

const stringOr = (value: unknown) => (typeof value === "string" ? value : "");

export function wake(
  scope: SessionScope,
  cause: WakeCause,
  now: number,
  detail: Record<string, unknown> = {},
): Change<WakeResult> {
  return change("wake", scope.sessionId, function* () {
    const park = yield* q.endPark(scope.sessionId, "woke", cause, now, woken(cause, now));
    // Not this cause's to end (or none holds): the park that holds, if one does, says why.
    if (!park) {
      const held = yield* q.parkOf(scope.sessionId);
      return held ? { woke: false, park: held } : { woke: false };
    }
    yield* q.audit(auditRow(now, scope, { event: "woke", reason: cause, detail: { parkId: park.id, ...detail } }));
    // A check that passed says what it printed; a time that came on a check says what it printed last.
    const output = cause === "check" ? stringOr(detail.output) : (park.checkOutput ?? "");
    const wakeNote = JSON.stringify(wokenBecause({ ...park, detail: parkDetail(park) }, cause, output));
    // The look owed now, as look-owed.ts says it, written with the note alone: no read of the row first.
    const owed = yield* q.noteWake(scope.sessionId, { ...lookColumns({ owe: now }), wakeNote }, now);
    if (owed) return { woke: true, park, owed };
    // A park needs no session row (a limit parks a session seen only in its failed turn): the row made, then owed.
    const row = yield* applyChange(scope, now, { wakeNote }, { owe: now });
    return { woke: true, park, owed: owedLookOf(row) };
  });
}
