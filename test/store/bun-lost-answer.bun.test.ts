// Bun's SQL client (1.3.14, inside OpenCode) now and then never delivers a statement's answer. Every statement under
// Bun is bounded on the client: it fails as an outage ("unavailable": the enforcer pauses and probes), the connection
// it used is closed (a late answer can never be read as the next statement's), and the next statement works. Proven
// through a loopback proxy that loses one answer on purpose, under OpenCode's Bun and under Node (node-postgres's
// `query_timeout`). The shape of statement Bun loses answers to is still unknown: the shapes tried on Bun's own client
// (bun-answer-shapes-runner.ts) and a load of the store's statements from four Bun processes all settle.
import { describe, expect, it } from "vitest";
import { startProcess } from "../crash/processes.js";
import { freshDatabase } from "../support/pg-database.js";
import { loseOneAnswer, type LostAnswerReport, type Outcome } from "../support/lost-answer.js";

const CLIENT_TIMEOUT_MS = 2000;

function expectLostAnswerHandled(r: LostAnswerReport) {
  const { plain, inTransaction } = r;
  expect(r.swallowed).toBe(2);
  for (const lost of [plain, inTransaction]) {
    expect(lost).toMatchObject({ settled: "failed", problem: "unavailable" });
    // Not before the client's own timeout: the statement was waited for, then given up.
    expect(lost.ms).toBeGreaterThanOrEqual(CLIENT_TIMEOUT_MS - 50);
  }
  expect(r.plainClosed).toBe(1);
  expect(r.transactionClosed).toBe(1);
  expect(r.afterPlain).toMatchObject({ settled: "answered" });
  expect(r.afterTransaction).toMatchObject({ settled: "answered" });
}

describe("a statement whose answer never comes", () => {
  it(
    "under OpenCode's Bun: fails as an outage, its connection closed, and the next one works",
    { timeout: 120_000 },
    async () => {
      const bun = startProcess("bun", "../store/bun-lost-answer-runner.ts", {
        PG_URL: await freshDatabase("bun_lost"),
        MODE: "swallow",
        CLIENT_TIMEOUT_MS: String(CLIENT_TIMEOUT_MS),
      });
      const line = (await bun.waitFor("result", 110_000)) as { runtime: string; result: LostAnswerReport };
      expect(line.runtime).toMatch(/^bun 1\./);
      expectLostAnswerHandled(line.result);
    },
  );

  it("under Node (node-postgres): the same", { timeout: 60_000 }, async () => {
    expectLostAnswerHandled(await loseOneAnswer(await freshDatabase("node_lost"), CLIENT_TIMEOUT_MS));
  });

  it("the client gives up before the server's own statement and lock timeouts", async () => {
    const { limitsOf } = await import("../../src/store/pg/pools.js");
    for (const options of [{}, { statementTimeoutMs: 30_000 }, { idleInTransactionMs: 60_000 }]) {
      const { settings, clientTimeout } = limitsOf(options);
      expect(clientTimeout).toBeLessThan(Number(settings.statement_timeout));
      expect(clientTimeout).toBeLessThan(Number(settings.lock_timeout));
      // Yet longer than a frozen holder keeps a session's lock: a lock wait outlives it rather than pause.
      expect(clientTimeout).toBeGreaterThan(Number(settings.idle_in_transaction_session_timeout));
    }
  });
});

/** How many statements of one shape ended each way. */
type Tally = Partial<Record<Outcome["settled"], number>>;

describe("looking for the shape of statement whose answer Bun loses", () => {
  it(
    "shapes tried on Bun's own client: every statement settles; a connection the server ended is an outage",
    {
      timeout: 180_000,
    },
    async () => {
      const bun = startProcess("bun", "../store/bun-answer-shapes-runner.ts", {
        PG_URL: await freshDatabase("bun_shapes"),
        WATCHDOG_MS: "20000",
      });
      const { results } = (await bun.waitFor("results", 170_000)) as { results: Record<string, Outcome | Tally> };
      console.log(`bun statement shapes: ${JSON.stringify(results)}`);
      const unsettled = Object.entries(results).filter(([, r]) => ("settled" in r ? r.settled === "never" : r.never));
      expect(unsettled).toEqual([]);
      // A transaction the server ended for idling (a frozen process) fails with Bun's own words: still an outage.
      expect(results.e2_idleInTx).toMatchObject({ settled: "failed", problem: "unavailable" });
      expect(results.e3_inFlightKill).toMatchObject({ settled: "failed", problem: "unavailable" });
    },
  );

  it("the store's statements from four processes under load: every one settles", { timeout: 180_000 }, async () => {
    const url = await freshDatabase("bun_load");
    // Both cores full for as long as it runs, in every `npm test`: 6 s by default (about 5,000 statements); a search
    // for the lost answer asks for longer (`BUN_LOAD_SECONDS=600`).
    const seconds = process.env.BUN_LOAD_SECONDS ?? "6";
    const processes = Array.from({ length: 4 }, () =>
      startProcess("bun", "../store/bun-lost-answer-runner.ts", {
        PG_URL: url,
        MODE: "load",
        SECONDS: seconds,
        CALLERS: "100",
        CLIENT_TIMEOUT_MS: "15000",
      }),
    );
    const lines = (await Promise.all(processes.map((p) => p.waitFor("result", 170_000)))) as Array<{
      result: Record<string, { answered: number; failed: number; never: number; errors: string[] }>;
    }>;
    const totals: Record<string, { answered: number; failed: number; never: number; errors: string[] }> = {};
    for (const { result } of lines)
      for (const [shape, t] of Object.entries(result)) {
        const sum = (totals[shape] ??= { answered: 0, failed: 0, never: 0, errors: [] });
        sum.answered += t.answered;
        sum.failed += t.failed;
        sum.never += t.never;
        sum.errors.push(...t.errors.filter((e) => !sum.errors.includes(e)));
      }
    console.log(`bun load, 4 processes × 100 callers × ${seconds} s: ${JSON.stringify(totals)}`);
    for (const t of Object.values(totals)) expect(t.never).toBe(0);
  });
});
