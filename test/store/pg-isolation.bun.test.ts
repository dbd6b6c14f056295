// Transactions on PostgreSQL kept apart under load, under Node (node-postgres) and under OpenCode's Bun (Bun's SQL
// client): pg-isolation-process.ts runs plain statements and transactions at once and counts any that mixed.
import { describe, expect, it } from "vitest";
import { startProcess } from "../crash/processes.js";
import { freshDatabase } from "../support/pg-database.js";

describe("PostgreSQL connections", () => {
  it.each(["node", "bun"] as const)(
    "under %s, a plain statement never runs inside a transaction, nor two transactions on one connection",
    { timeout: 60_000 },
    async (runtime) => {
      // Bun 1.3.14's pool ran half of them inside another call's transaction (oven-sh/bun#32004) until transactions
      // got connections of their own.
      const process = startProcess(runtime, "../store/pg-isolation-process.ts", { DB: await freshDatabase("iso") });
      const found = await process.waitFor("runtime", 45_000);
      expect(found).toMatchObject({ runtime, plainInsideTransaction: 0, sharedTransactions: 0, failed: 0 });
      expect(found.transactions).toBeGreaterThan(100);
      expect(found.plain).toBeGreaterThan(100);
    },
  );
});
