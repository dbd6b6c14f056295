// The store's contract (contract-cases.ts) on PostgreSQL under Node (node-postgres), a database per case.
import { describe, it } from "vitest";
import { openStore } from "../../src/store/open.js";
import { freshDatabase } from "../support/pg-database.js";
import { CONTRACT_CASES, withWorld, type ContractDatabase } from "./contract-cases.js";

async function postgres(): Promise<ContractDatabase> {
  const url = await freshDatabase("contract");
  return { open: (options) => openStore(url, options) };
}

describe("the store's contract under Node, on PostgreSQL (node-postgres)", () => {
  it.each(CONTRACT_CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) =>
    withWorld(await postgres(), c.run),
  );
});
