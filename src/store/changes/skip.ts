// A guard said no at an idle: the decision is its `skipped` row, written with the session change and the look owed
// that go with it (the look it answers taken, or one owed later), in one transaction.
import type { SkipReason } from "../../core/reasons.js";
import { auditRow } from "../audit-row.js";
import { change, q, type Change } from "../script.js";
import type { SessionChange, SessionScope } from "../types.js";
import { applyChange } from "./change-session.js";
import type { LookOwed } from "./look-owed.js";

export function skip(
  scope: SessionScope,
  now: number,
  reason: SkipReason,
  detail: Record<string, unknown>,
  after: { update?: SessionChange; look?: LookOwed } = {},
): Change<void> {
  return change("skip", scope.sessionId, function* () {
    if (after.update || after.look) yield* applyChange(scope, now, after.update ?? {}, after.look);
    yield* q.audit(auditRow(now, scope, { event: "skipped", reason, detail }));
  });
}
