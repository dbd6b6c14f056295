// One statement's answer lost on purpose, then the next statement: the scenario the Bun runner and the Node test both
// run (test/store/bun-lost-answer.bun.test.ts), through a SwallowingProxy. Runs under Node and under Bun.
import { sql } from "drizzle-orm";
import { openPg } from "../../src/store/pg/open.js";
import { pgProblemOf } from "../../src/store/pg/problems.js";
import { SwallowingProxy } from "./swallowing-proxy.js";

export interface Outcome {
  settled: "answered" | "failed" | "never";
  ms: number;
  error?: string;
  problem?: string;
}

/** Far beyond every timeout the store sets: a statement still unsettled by then never will be. */
const WATCHDOG_MS = Number(process.env.WATCHDOG_MS ?? 45_000);

/** How `run` ended, and after how long. */
export async function outcomeOf(run: () => Promise<unknown>): Promise<Outcome> {
  const started = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const never = new Promise<"never">((resolve) => (timer = setTimeout(() => resolve("never"), WATCHDOG_MS)));
  try {
    const result = await Promise.race([run().then(() => "answered" as const), never]);
    return { settled: result, ms: Math.round(performance.now() - started) };
  } catch (error) {
    return {
      settled: "failed",
      ms: Math.round(performance.now() - started),
      error: error instanceof Error ? error.message.slice(0, 300) : String(error),
      problem: pgProblemOf(error),
    };
  } finally {
    clearTimeout(timer);
  }
}

export interface LostAnswerReport {
  plain: Outcome;
  /** Connections closed by the client after the plain statement's answer was lost. */
  plainClosed: number;
  afterPlain: Outcome;
  inTransaction: Outcome;
  transactionClosed: number;
  afterTransaction: Outcome;
  swallowed: number;
}

/** A plain statement, then one inside a transaction, each losing its answer, each followed by one that should work. */
export async function loseOneAnswer(url: string, clientTimeoutMs: number): Promise<LostAnswerReport> {
  const proxy = await SwallowingProxy.start(Number(new URL(url).port), "swallow_me");
  const connection = await openPg(proxy.via(url), { clientTimeoutMs });
  const lost = sql`SELECT 'swallow_me' AS marker`;
  const fine = sql`SELECT 1 AS one`;
  try {
    const plain = await outcomeOf(() => connection.rows(lost));
    const plainClosed = await proxy.closedByClient(1);
    const afterPlain = await outcomeOf(() => connection.rows(fine));
    const inTransaction = await outcomeOf(() => connection.transaction((tx) => tx.execute(lost), "ses_swallow"));
    const transactionClosed = (await proxy.closedByClient(plainClosed + 1)) - plainClosed;
    const afterTransaction = await outcomeOf(() => connection.transaction((tx) => tx.execute(fine), "ses_swallow"));
    return {
      plain,
      plainClosed,
      afterPlain,
      inTransaction,
      transactionClosed,
      afterTransaction,
      swallowed: proxy.swallowed,
    };
  } finally {
    await Promise.race([connection.close(), new Promise((resolve) => setTimeout(resolve, 3000))]);
    await proxy.close();
  }
}
