// The store's contract (every subject of contract-cases.ts) on PostgreSQL under Node (node-postgres), a database per
// case, a describe per subject. One file for all of them: the cases share one worker and one load of the store, where a
// file per subject would load it again for each.
import { describe, it } from "vitest";
import { openStore } from "../../src/store/open/open.js";
import { freshDatabase } from "../support/pg-database.js";
import { CONTRACT } from "./contract-cases.js";
import { withWorld, type ContractDatabase } from "./contract-world.js";

async function postgres(): Promise<ContractDatabase> {
  const url = await freshDatabase("contract");
  return { open: (options) => openStore(url, options) };
}

describe.each(CONTRACT.map((s) => [s.subject, s.cases] as const))(
  "%s: the store's contract under Node, on PostgreSQL (node-postgres)",
  (_subject, cases) => {
    it.each(cases.map((c) => [c.name, c] as const))("%s", async (_name, c) => withWorld(await postgres(), c.run));
  },
);
