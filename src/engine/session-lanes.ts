// The per-session serial executor. Every state change of a session (a read of its row, a decision, the writes that
// follow) runs as one job in the session's lane: two events of one session never interleave their state changes,
// while different sessions never wait for each other. Jobs are short: they never wait for OpenCode (reads of
// OpenCode and prompt calls happen between jobs, and the next job checks whether the session moved on meanwhile).
// A job must not wait for another job of its own lane (it would wait forever).

export class SessionLanes {
  private readonly tails = new Map<string, Promise<void>>();

  constructor(private readonly onError: (error: unknown) => void) {}

  /** Sessions with a job queued or running. */
  get size(): number {
    return this.tails.size;
  }

  /** Runs `job` after the session's earlier jobs; resolves or rejects as the job does (the lane goes on either way). */
  run<T>(sessionId: string, job: () => Promise<T> | T): Promise<T> {
    const previous = this.tails.get(sessionId);
    const result = previous ? previous.then(job) : Promise.resolve().then(job);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(sessionId, tail);
    void tail.then(() => {
      if (this.tails.get(sessionId) === tail) this.tails.delete(sessionId);
    });
    return result;
  }

  /** `run` for a job nobody waits for: a failure is reported, never thrown. */
  post<T>(sessionId: string, job: () => Promise<T> | T): Promise<T | undefined> {
    return this.run(sessionId, job).catch((error: unknown) => {
      this.onError(error);
      return undefined;
    });
  }

  /** Resolves once every lane is empty (jobs queued meanwhile included). */
  async idle(): Promise<void> {
    while (this.tails.size > 0) await Promise.all([...this.tails.values()]);
  }
}
