// A lease tick: this owner's armed countdowns stay its own for another lease.
import { change, q, type Change } from "../script.js";

export function renewLeases(owner: string, leaseUntil: number): Change<number> {
  return change("renew-leases", undefined, () => q.renewLeases(owner, leaseUntil));
}
