// What session-row.ts promises on every database: every column a change may set is stored as written.
import assert from "node:assert/strict";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { resume } from "../../../src/store/changes/resume.js";
import { q } from "../../../src/store/script.js";
import { NOW, S1, type ContractCase } from "../contract-world.js";

export const SESSION_ROW_CASES: ContractCase[] = [
  {
    name: "work counts and the file ledger: stored as written, started over by a resume",
    async run({ a, b }) {
      const ledger = JSON.stringify({ files: { "/p/src/é ünïcode.ts": ["h1", null, "h2"] } });
      await a.change(changeSession(S1, NOW, { workContinuations: 5, stagnantContinuations: 1, fileLedger: ledger }));
      const row = (await b.read(q.session("ses_1")))!;
      assert.deepEqual([row.workContinuations, row.stagnantContinuations, row.fileLedger], [5, 1, ledger]);
      // Turns of work alone are a count a resume starts over (a stop for work without a todo is lifted by it).
      await a.change(changeSession(S1, NOW + 1, { stagnantContinuations: 0 }));
      assert.deepEqual(await b.change(resume(S1, "cli", NOW + 2)), { lifted: [], changed: true });
      const after = (await a.read(q.session("ses_1")))!;
      assert.deepEqual([after.workContinuations, after.fileLedger], [0, null]);
    },
  },
];
