// Prompt calls go through a per-session serial queue: one continuation of a session at a time (a p-queue each), and at
// most `maxConcurrentInjections` at once in the process (one shared p-queue). An attempt waits here for its turn.
import PQueue from "p-queue";

export class DeliveryQueue {
  private readonly global: PQueue;
  private readonly perSession = new Map<string, PQueue>();
  /** Shutting down: attempts still waiting for the global cap do nothing when their turn comes. */
  private dropping = false;

  constructor(
    maxConcurrent: number,
    private readonly onError: (error: unknown) => void,
  ) {
    this.global = new PQueue({ concurrency: maxConcurrent });
  }

  /** `attempt` runs after the session's earlier ones, within the global cap. */
  add(sessionId: string, attempt: () => Promise<void>): void {
    let queue = this.perSession.get(sessionId);
    if (!queue) {
      const created = new PQueue({ concurrency: 1 });
      queue = created;
      this.perSession.set(sessionId, created);
      created.on("idle", () => {
        if (this.perSession.get(sessionId) === created && created.size === 0 && created.pending === 0)
          this.perSession.delete(sessionId);
      });
    }
    void queue
      .add(() => this.global.add(async () => (this.dropping ? undefined : attempt())))
      .catch((error: unknown) => this.onError(error));
  }

  /** A continuation of this session is queued or running in this process. */
  isBusy(sessionId: string): boolean {
    const queue = this.perSession.get(sessionId);
    return queue !== undefined && queue.size + queue.pending > 0;
  }

  /**
   * Drops the attempts not started yet (their countdowns stay armed for a successor). The global queue is not cleared
   * but drained of no-ops: a session's queue waits for its attempt's turn there, and a cleared entry would never
   * settle, holding that session's queue (and `drain()`, and shutdown) for ever.
   */
  stopQueued(): void {
    this.dropping = true;
    for (const queue of this.perSession.values()) queue.clear();
  }

  /** Resolves when every attempt queued or running has finished. */
  async drain(): Promise<void> {
    while (
      this.global.size + this.global.pending > 0 ||
      [...this.perSession.values()].some((q) => q.size + q.pending > 0)
    ) {
      await Promise.all([this.global.onIdle(), ...[...this.perSession.values()].map((q) => q.onIdle())]);
    }
  }
}
