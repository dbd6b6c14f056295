// A process that stops following a scope (it shuts down, or a fleet hands servers on) hands its countdowns there
// back, owner cleared, for a successor to adopt at once rather than after the lease runs out. A fleet replica hands
// back every server it let go in one statement.
import type { Scope } from "../port.js";
import { change, q, type Change } from "../script.js";

export function releaseLeases(owner: string, scopes: Scope | readonly Scope[]): Change<number> {
  const all = ([] as Scope[]).concat(scopes);
  return change("release-leases", undefined, () => q.releaseLeases(owner, all));
}
