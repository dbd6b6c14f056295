// What stop.ts promises on every database. How a stop ends the armed countdown is proven with the key's cancel in
// cancel-by-key.cases.ts; how one is lifted, in resume.cases.ts.
import assert from "node:assert/strict";
import { stop } from "../../../src/store/changes/stop.js";
import { q } from "../../../src/store/script.js";
import { NOW, S1, type ContractCase } from "../contract-world.js";

export const STOP_CASES: ContractCase[] = [
  {
    name: "stop: once whoever stops first, in a session never seen; its source and time kept, nothing to cancel",
    async run({ a, b, trail }) {
      const sources = ["cli", "tui", "api", "command"] as const;
      const results = await Promise.all(sources.map((source, i) => (i % 2 ? b : a).change(stop(S1, source, NOW + i))));
      assert.equal(results.filter((r) => r.changed).length, 1);
      const won = results.findIndex((r) => r.changed);
      assert.equal(results[won]?.cancelled, undefined, "no countdown was armed");
      const row = (await b.read(q.session("ses_1")))!;
      assert.deepEqual([row.stoppedAt, row.stopSource], [NOW + won, sources[won]]);
      assert.deepEqual(await trail("ses_1"), [`stopped:${sources[won]}`]);
      assert.equal(await a.read(q.session("ses_2")), undefined, "another session is left alone");
    },
  },
];
