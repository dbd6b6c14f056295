// What resume.ts promises on every database: which holds a resume lifts, and which looks it leaves owed.
import assert from "node:assert/strict";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { TAKE } from "../../../src/store/changes/look-owed.js";
import { resume } from "../../../src/store/changes/resume.js";
import { stop } from "../../../src/store/changes/stop.js";
import { q } from "../../../src/store/script.js";
import { NOW, S1, type ContractCase } from "../contract-world.js";

export const RESUME_CASES: ContractCase[] = [
  {
    name: "resume: lifts a stop once; the CLI's and TUI's leave the look owed, the engine's own do not",
    async run({ a, b, count }) {
      const nothing = { lifted: [], changed: false };
      assert.deepEqual(await a.change(resume(S1, "cli", NOW)), nothing, "nothing to resume in a session never seen");
      await a.change(stop(S1, "command", NOW));
      assert.deepEqual(await b.change(resume(S1, "cli", NOW + 1)), { lifted: ["stopped"], changed: true });
      assert.deepEqual(await a.change(resume(S1, "cli", NOW + 2)), nothing);
      const row = (await a.read(q.session("ses_1")))!;
      assert.equal(row.stoppedAt, null);
      assert.equal(row.recheckAt, NOW + 1, "another process resumed: a running enforcer owes it a look");
      await a.change(changeSession(S1, NOW + 3, { stoppedAt: NOW, continuations: 4 }, TAKE));
      assert.deepEqual(await a.change(resume(S1, "api", NOW + 4)), { lifted: ["stopped"], changed: true });
      const after = (await a.read(q.session("ses_1")))!;
      assert.deepEqual([after.stoppedAt, after.recheckAt, after.continuations], [null, null, 0]);
      assert.equal(await count("audit_events WHERE event IN ('stopped', 'unstopped')"), 3);
    },
  },
  {
    name: "resume: lifts every hold the user is told to resume from, says which, and records it",
    async run({ a, b }) {
      // A provider's refusal the user was told of, attempts given up, and a pause, all at once.
      const held = {
        lastErrorKind: "permanent",
        lastErrorAt: NOW,
        notifiedStop: "gave_up",
        consecutiveFailures: 4,
        pausedAt: NOW,
        pauseMessageId: "msg_user",
      };
      await a.change(changeSession(S1, NOW, held));
      const resumed = await b.change(resume(S1, "tui", NOW + 1));
      assert.deepEqual(resumed, { lifted: ["user_took_over", "provider_error", "gave_up"], changed: true });
      const row = (await a.read(q.session("ses_1")))!;
      const columns = [row.lastErrorKind, row.notifiedStop, row.consecutiveFailures, row.pausedAt, row.resumedAt];
      assert.deepEqual(columns, [null, null, 0, null, NOW + 1]);
      const [unstopped] = await a.reader.all<{ reason: string; detail: string }>(
        "SELECT reason, detail FROM audit_events WHERE session_id = ? AND event = 'unstopped'",
        "ses_1",
      );
      assert.equal(unstopped?.reason, "tui");
      const lifted = (JSON.parse(unstopped?.detail ?? "{}") as { lifted?: string[] }).lifted;
      assert.deepEqual(lifted, ["user_took_over", "provider_error", "gave_up"]);
      // A context that is full is not lifted by a resume (the way out is to write or compact).
      await a.change(changeSession(S1, NOW + 2, { notifiedStop: "token_limit", tokenLimitAt: NOW + 2 }));
      assert.deepEqual(await a.change(resume(S1, "api", NOW + 3)), { lifted: [], changed: false });
    },
  },
  {
    name: "resume: a question or all done told is no hold: not reported as lifted",
    async run({ a }) {
      await a.change(changeSession(S1, NOW, { notifiedStop: "waiting_for_user" }));
      assert.deepEqual(await a.change(resume(S1, "cli", NOW + 1)), { lifted: [], changed: false });
      await a.change(changeSession(S1, NOW + 2, { notifiedStop: "todos_complete", continuations: 3 }));
      assert.deepEqual(
        await a.change(resume(S1, "api", NOW + 3)),
        { lifted: [], changed: true },
        "a fresh start all the same",
      );
      await a.change(changeSession(S1, NOW + 4, { notifiedStop: "waiting_for_user", pausedAt: NOW + 4 }));
      assert.deepEqual(await a.change(resume(S1, "tui", NOW + 5)), { lifted: ["user_took_over"], changed: true });
      assert.equal((await a.read(q.session("ses_1")))?.notifiedStop, null);
    },
  },
];
