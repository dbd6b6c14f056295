// What change-session.ts promises on every database: a change computed from the row, serialized per session.
import assert from "node:assert/strict";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { q } from "../../../src/store/script.js";
import { NOW, type ContractCase } from "../contract-world.js";

export const CHANGE_SESSION_CASES: ContractCase[] = [
  {
    name: "change-session: a change computed from the row is serialized per session across processes",
    async run({ a, b }) {
      const scope = { sessionId: "ses_count", directory: "/p" };
      await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 ? a : b).change(changeSession(scope, NOW + i, (row) => ({ continuations: row.continuations + 1 }))),
        ),
      );
      assert.equal((await a.read(q.session("ses_count")))?.continuations, 30);
    },
  },
];
