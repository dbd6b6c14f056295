// A guard said no at an idle: the decision is its `skipped` row, written with the session change and the look owed
// that go with it (the look it answers taken, or one owed later), and the stop it may tell (tell-stop.ts), in one
// transaction.
import type { SkipReason } from "../../core/reasons.js";
import { auditRow } from "../audit-row.js";
import { change, q, type Change } from "../script.js";
import type { SessionChange, SessionScope } from "../types.js";
import { applyChange } from "./change-session.js";
import type { LookOwed } from "./look-owed.js";
import { tellStop, type Telling, type Told } from "./tell-stop.js";

const UNTOLD: Told = { news: false, notices: 0 };

export function skip(
  scope: SessionScope,
  now: number,
  reason: SkipReason,
  detail: Record<string, unknown>,
  after: { update?: SessionChange; look?: LookOwed; tell?: Telling } = {},
): Change<Told> {
  return change("skip", scope.sessionId, function* () {
    yield* q.audit(auditRow(now, scope, { event: "skipped", reason, detail }));
    if (after.tell) return yield* tellStop(scope, reason, detail, after.tell, now, after);
    if (after.update || after.look) yield* applyChange(scope, now, after.update ?? {}, after.look);
    return UNTOLD;
  });
}
