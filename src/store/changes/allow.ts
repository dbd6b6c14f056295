// More budget for one session (`todo-continuation allow`, the TUI's "Allow more", the API): adds to what the session
// is allowed beyond `maxContinuations` and the spend caps until its next real user message or resume, and lifts the
// budget stop the user was told of, so that the session goes on without the counts starting over (a resume would
// reset them, and with them what the continuations cost so far). Who allows decides who looks next, as for a resume:
// the engine's API looks at once, the CLI and the TUI leave the look owed for a running enforcer.
import type { Allowance } from "../../core/decision.js";
import type { SkipReason, StopSource } from "../../core/reasons.js";
import { ALLOW_LIFTS } from "../../core/skip-reasons.js";
import { auditRow } from "../audit-row.js";
import type { SessionRow } from "../schema.js";
import { change, q, type Change } from "../script.js";
import type { SessionScope } from "../types.js";
import { withLook } from "./look-owed.js";
import { LOOKS_ITSELF } from "./resume.js";
import { patchSession } from "./session-row.js";

/** What to allow; every amount left out is 0, and with none given, `asMuchAgain`. */
export interface Grant {
  continuations?: number;
  /** In the currency of the models' prices. */
  cost?: number;
  tokens?: number;
}

export interface Allowed {
  /** False when the session has no row (never seen), or nothing was granted or lifted. */
  changed: boolean;
  /** What was added to the session's allowance. */
  granted: Allowance;
  /** The budget stop lifted (`budget_exhausted`, `cost_budget`), when the user had been told of one. */
  lifted: SkipReason[];
}

const NOTHING: Allowance = { continuations: 0, cost: 0, tokens: 0 };

/**
 * With no amount given: as much again as the session had since the last real user message — as many continuations as
 * it sent (at least one), and what they cost and used. A session stopped by the daily cap before spending anything of
 * its own gets no cost this way: it needs an amount (`--cost`).
 */
function asMuchAgain(row: SessionRow): Allowance {
  return { continuations: Math.max(row.continuations, 1), cost: row.continuationCost, tokens: row.continuationTokens };
}

function grantedOf(grant: Grant, row: SessionRow): Allowance {
  const given = [grant.continuations, grant.cost, grant.tokens];
  if (given.every((amount) => amount === undefined)) return asMuchAgain(row);
  const whole = (amount: number | undefined) => amount === undefined || (Number.isSafeInteger(amount) && amount >= 0);
  const cost = grant.cost === undefined || (Number.isFinite(grant.cost) && grant.cost >= 0);
  if (!whole(grant.continuations) || !whole(grant.tokens) || !cost)
    throw new RangeError(`an allowance is 0 or more (continuations and tokens whole): ${JSON.stringify(grant)}`);
  return { continuations: grant.continuations ?? 0, cost: grant.cost ?? 0, tokens: grant.tokens ?? 0 };
}

export function allow(scope: SessionScope, grant: Grant, source: StopSource, now: number): Change<Allowed> {
  return change("allow", scope.sessionId, function* () {
    const row = yield* q.session(scope.sessionId);
    if (!row) return { changed: false, granted: NOTHING, lifted: [] };
    const granted = grantedOf(grant, row);
    // Any other stop stays until its own way on (a resume, a message).
    const lifted = row.notifiedStop && ALLOW_LIFTS.has(row.notifiedStop) ? [row.notifiedStop as SkipReason] : [];
    if (lifted.length === 0 && granted.continuations + granted.cost + granted.tokens === 0)
      return { changed: false, granted, lifted };
    const owed = lifted.length > 0 && !LOOKS_ITSELF.has(source) ? withLook(row, { owe: now }) : row;
    const patch = {
      allowedContinuations: row.allowedContinuations + granted.continuations,
      allowedCost: row.allowedCost + granted.cost,
      allowedTokens: row.allowedTokens + granted.tokens,
      ...(lifted.length > 0 ? { notifiedStop: null } : {}),
    };
    yield* patchSession(owed, patch, now);
    const detail = { allowed: granted, lifted };
    yield* q.audit(auditRow(now, scope, { event: "unstopped", reason: source, detail }));
    return { changed: true, granted, lifted };
  });
}
