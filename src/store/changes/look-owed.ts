// The look the enforcer owes a session (`sessions.recheck_at`, when it is due, and `owed_since`, which idle it judges):
// owed when a look begins to read OpenCode (a process that dies meanwhile is followed by one that looks again), when
// a todo read failed or sub-sessions still run (looked at later), when a continuation went out (its start is checked),
// or when the CLI or the TUI resumed the session; taken when it is made or no longer owed; expired when a process
// finds it beyond the resume window. These are its only transitions, and this file the only writer of the two columns:
// other changes name the transition that goes with them (a skip takes the look it answers), and it is written in
// their transaction.
import { EXPIRE_REASON } from "../../core/reasons.js";
import { auditRow } from "../audit-row.js";
import type { SessionRow } from "../schema.js";
import { change, q, type Change, type Script } from "../script.js";
import type { OwedLook, SessionScope } from "../types.js";

/**
 * A transition of the look owed. `owe`: looked at by `at` (epoch ms), judging the idle seen at `since` (absent: an
 * idle as old as the look itself). `take`: the look is made, or no longer owed.
 */
export type LookOwed = { readonly owe: number; readonly since?: number } | { readonly take: true };

/** The look is made, or no longer owed. */
export const TAKE: LookOwed = { take: true };

/** The columns of the look owed as `look` says it. An earlier look's idle never sticks to a later one. */
export function lookColumns(look: LookOwed): Pick<SessionRow, "recheckAt" | "owedSince"> {
  if ("take" in look) return { recheckAt: null, owedSince: null };
  return { recheckAt: look.owe, owedSince: look.since ?? null };
}

/** `row` with the look owed as `look` says. */
export function withLook(row: SessionRow, look: LookOwed): SessionRow {
  return { ...row, ...lookColumns(look) };
}

/** The look `row` is owed, as the engine's looks owed take it (`sessionsToRecheck`'s rows). */
export function owedLookOf(row: SessionRow): OwedLook {
  return { sessionId: row.sessionId, recheckAt: row.recheckAt, owedSince: row.owedSince };
}

/** Owes the session a look (creating its row if needed); the row as written. */
export function oweLook(
  scope: SessionScope,
  now: number,
  look: Extract<LookOwed, { owe: number }>,
): Change<SessionRow> {
  return change("look-owed", scope.sessionId, () => lookOwed(scope, now, look));
}

/** The session is owed no look (any it was owed is made or dropped); the row as written. */
export function takeOwedLook(scope: SessionScope, now: number): Change<SessionRow> {
  return change("look-owed", scope.sessionId, () => lookOwed(scope, now, TAKE));
}

/** A look owed to the session found beyond the resume window: it is dropped, and the drop recorded (`expired`). */
export function expireOwedLook(scope: SessionScope, now: number, detail: Record<string, unknown>): Change<void> {
  return change("look-owed", scope.sessionId, function* () {
    yield* lookOwed(scope, now, TAKE);
    yield* q.audit(auditRow(now, scope, { event: "expired", reason: EXPIRE_REASON, detail }));
  });
}

function* lookOwed(scope: SessionScope, now: number, look: LookOwed): Script<SessionRow> {
  return yield* q.upsertSession(scope, lookColumns(look), now);
}
