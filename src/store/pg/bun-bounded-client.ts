// Bun's SQL client with a client-side bound on every statement. Bun 1.3.14 now and then never delivers a statement's
// answer (a process waited for good with the idle timer off), and it has no query timeout of its own. A statement
// without an answer in time fails as an outage, and the client it ran on is closed and replaced: Bun's pool does not
// say which connection ran it, and a connection left open could hand the late answer to the next statement.
import type { SQL } from "bun";

/** A statement given up on: the server stopped answering it. Classified as an outage (problems.ts). */
export class AnswerTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`no answer from the database within ${timeoutMs} ms; the connection was closed`);
    this.name = "AnswerTimeoutError";
  }
}

type Client = InstanceType<typeof SQL>;
type Query = PromiseLike<unknown> & { values(): PromiseLike<unknown> };

/** What drizzle's bun-sql driver calls on its client: statements, and transactions of statements. */
export interface BoundedClient {
  unsafe(query: string, params?: unknown[]): Query;
  begin<T>(work: (tx: Pick<BoundedClient, "unsafe">) => Promise<T>): Promise<T>;
  close(options?: { timeout?: number }): Promise<void>;
}

/**
 * A client opened by `open`, each statement bounded by `timeoutMs` (0: unbounded). BEGIN and COMMIT are statements
 * too: a transaction is bounded until its work starts and again once its work is done.
 */
export function boundedClient(open: () => Client, timeoutMs: number): BoundedClient {
  let current = open();
  let closed = false;
  const retire = (client: Client) => {
    if (client === current && !closed) current = open();
    // Bun reads a timeout of 0 as "wait for the statements in flight": the one that never ends would keep it open.
    void client.close({ timeout: 0.001 }).catch(() => undefined);
  };
  const within = <T>(client: Client, answer: PromiseLike<T>): Promise<T> => {
    if (timeoutMs <= 0) return Promise.resolve(answer);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        retire(client);
        reject(new AnswerTimeoutError(timeoutMs));
      }, timeoutMs);
    });
    return Promise.race([Promise.resolve(answer), expired]).finally(() => clearTimeout(timer));
  };
  const statementsOn = (client: Client, runner: Pick<Client, "unsafe">) => ({
    unsafe(query: string, params?: unknown[]): Query {
      const q = runner.unsafe(query, params) as unknown as Query;
      return {
        then: (onAnswer, onFailure) => within(client, q).then(onAnswer, onFailure),
        values: () => within(client, q.values()),
      };
    },
  });
  return {
    unsafe: (query, params) => statementsOn(current, current).unsafe(query, params),
    async begin<T>(work: (tx: Pick<BoundedClient, "unsafe">) => Promise<T>): Promise<T> {
      const client = current;
      if (timeoutMs <= 0) return client.begin((tx) => work(statementsOn(client, tx))) as Promise<T>;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let giveUp: (error: Error) => void = () => undefined;
      const expired = new Promise<never>((_, reject) => (giveUp = reject));
      const arm = () => {
        timer = setTimeout(() => {
          retire(client);
          giveUp(new AnswerTimeoutError(timeoutMs));
        }, timeoutMs);
      };
      arm();
      const done = client.begin(async (tx) => {
        clearTimeout(timer);
        try {
          return await work(statementsOn(client, tx));
        } finally {
          arm();
        }
      }) as Promise<T>;
      return Promise.race([done, expired]).finally(() => clearTimeout(timer));
    },
    async close(options) {
      closed = true;
      await current.close(options);
    },
  };
}
