// Transactions under Bun's SQL client (1.3.14, the Bun inside OpenCode), each on a connection nothing else uses.
// Bun's pool goes on handing plain queries to a connection that a `begin()` holds (oven-sh/bun#32004). Measured here:
// half of a busy process's plain queries ran inside another call's transaction — writes its rollback would undo,
// row locks held until its commit — and transactions sat idle behind them until the server ended them. So no
// transaction runs on the pool of plain queries: it takes one of a few single-connection clients, one transaction at
// a time each, waiting its turn in order, and a client whose transaction failed is replaced, never reused (its
// connection may be broken, or still inside the failed transaction).

/** One single-connection client, and how to close it. */
export interface Slot<Db> {
  db: Db;
  close(): Promise<void>;
}

export class TransactionSlots<Db> {
  private readonly free: Array<Slot<Db>> = [];
  private readonly waiting: Array<(slot: Slot<Db>) => void> = [];
  private readonly all = new Set<Slot<Db>>();
  private closed = false;

  constructor(
    size: number,
    private readonly open: () => Slot<Db>,
  ) {
    for (let i = 0; i < size; i++) this.free.push(this.opened());
  }

  /** `task` (one transaction) on a slot of its own, once one is free. */
  async use<T>(task: (db: Db) => Promise<T>): Promise<T> {
    // Worded as the driver words a closed pool, so that it reads as the database being unavailable.
    if (this.closed) throw new Error("Connection closed: the store was closed");
    const slot = this.free.pop() ?? (await new Promise<Slot<Db>>((resolve) => this.waiting.push(resolve)));
    let failed = false;
    try {
      return await task(slot.db);
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      this.handOn(failed ? this.replace(slot) : slot);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.all].map((slot) => slot.close().catch(() => undefined)));
    this.all.clear();
  }

  private opened(): Slot<Db> {
    const slot = this.open();
    this.all.add(slot);
    return slot;
  }

  private replace(slot: Slot<Db>): Slot<Db> {
    this.all.delete(slot);
    void slot.close().catch(() => undefined);
    return this.closed ? slot : this.opened();
  }

  private handOn(slot: Slot<Db>): void {
    const next = this.waiting.shift();
    if (next) next(slot);
    else this.free.push(slot);
  }
}
