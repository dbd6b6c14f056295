// The exactly-once point: a countdown goes from armed to fired only for its current owner, in the transaction that
// records its continuation `pending`, before OpenCode is called. False: it was cancelled meanwhile or is no longer
// this process's (taken over); nothing may be sent.
import { auditRow } from "../audit-row.js";
import { change, q, type Change } from "../script.js";
import type { NewInjection } from "../types.js";

export function claim(injection: NewInjection, detail: Record<string, unknown>): Change<boolean> {
  const at = injection.createdAt;
  return change("claim", injection.sessionId, function* () {
    if (!(yield* q.claimCountdown(injection.countdownId, injection.owner, at))) return false;
    yield* q.insertInjection(injection);
    const fired = { injectionId: injection.id, attempt: injection.attempt, ...detail };
    yield* q.audit(auditRow(at, injection, { event: "fired", detail: fired }, injection.countdownId));
    return true;
  });
}
