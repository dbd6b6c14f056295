// Which owners' heartbeats PostgreSQL counted as fresh at the last look, kept by the store so that deciding whether an
// owner is alive (PgStore.ownerAlive) needs no round trip. Every look brings it up to date: the heartbeat's read of
// all fresh replicas, a transaction's read of one owner's heartbeat, this process retiring an owner.
export class LiveOwners {
  private readonly fresh = new Set<string>();

  /** The heartbeat read every replica whose heartbeat is fresh now: the view before it no longer counts. */
  refreshed(freshOwners: Iterable<string>): void {
    this.fresh.clear();
    for (const owner of freshOwners) this.fresh.add(owner);
  }

  /** A transaction looked at one owner's heartbeat, and found it fresh or not. */
  looked(owner: string, fresh: boolean): void {
    if (fresh) this.fresh.add(owner);
    else this.fresh.delete(owner);
  }

  /** This process retired the owner: its heartbeat is gone. */
  retired(owner: string): void {
    this.fresh.delete(owner);
  }

  /** Whether the owner's heartbeat was fresh at the last look. */
  wasFresh(owner: string): boolean {
    return this.fresh.has(owner);
  }
}
