// What the operator's face (src/store/operator/operator.ts) answers on every database: probe, problems, schema, diagnostics.
import assert from "node:assert/strict";
import type { ContractCase } from "./contract-world.js";

export const OPERATOR_CASES: ContractCase[] = [
  {
    name: "upkeep and the operator's questions: probe, problems, schema, diagnostics",
    async run({ a }) {
      await a.probe();
      assert.equal(a.problemOf(new TypeError("not the database's")), undefined);
      const schema = await a.schemaState();
      assert.ok(schema.shipped >= 1);
      assert.deepEqual([schema.applied, schema.pending, schema.newer], [schema.shipped, 0, false]);
      const diagnostics = await a.diagnostics();
      assert.equal(diagnostics.integrity.ok, true);
      assert.match(diagnostics.driver, /^(better-sqlite3|bun:sqlite|pg|bun-sql)$/);
      assert.equal(a.roster === undefined, a.dialect === "sqlite", "a fleet's servers live on PostgreSQL only");
      assert.equal(typeof a.location, "string");
    },
  },
];
