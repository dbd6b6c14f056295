// A process that stops following a scope (it shuts down, or a fleet hands the server on) hands its countdowns there
// back, owner cleared, for a successor to adopt at once rather than after the lease runs out.
import { change, q, type Change } from "../script.js";

export function releaseLeases(owner: string, scope: { directory: string; server?: string | null }): Change<number> {
  return change("release-leases", undefined, () => q.releaseLeases(owner, scope));
}
