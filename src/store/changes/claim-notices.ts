// The sender takes due notices of its scope for a lease: of several processes (a user's OpenCode windows, a fleet's
// replicas), one takes each notice, and another takes it only once that lease has run out.
import type { NoticeRow } from "../schema.js";
import { change, q, type Change } from "../script.js";
import type { Scope } from "../types.js";

export function claimNotices(
  scope: Scope,
  channels: readonly string[],
  owner: string,
  now: number,
  leaseMs: number,
  limit: number,
): Change<NoticeRow[]> {
  return change("claim-notices", undefined, () => q.claimNotices(scope, channels, owner, now, leaseMs, limit));
}
