// What the store promises, written once against the port (and the operator face), and run on every database the
// enforcer runs on: vitest runs these under Node on better-sqlite3 and on PostgreSQL (node-postgres), and
// bun-contract-runner.ts runs them under OpenCode's Bun on bun:sqlite and on PostgreSQL (Bun's SQL client). Every port
// method and every state change of src/store/changes is exercised here on each of them. Assertions are node:assert's,
// so that the same file runs outside vitest.
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { adopt } from "../../src/store/adopt-orphans.js";
import { adoptChunk, type Orphan } from "../../src/store/changes/adopt.js";
import { releaseLeases } from "../../src/store/changes/release-leases.js";
import { renewLeases } from "../../src/store/changes/renew-leases.js";
import { arm } from "../../src/store/changes/arm.js";
import { cancelByKey } from "../../src/store/changes/cancel-by-key.js";
import { changeSession } from "../../src/store/changes/change-session.js";
import { claim } from "../../src/store/changes/claim.js";
import { end } from "../../src/store/changes/end.js";
import { prune } from "../../src/store/changes/prune.js";
import { recordBill } from "../../src/store/changes/record-bill.js";
import { recordOutcome, type OutcomePolicy } from "../../src/store/changes/record-outcome.js";
import { resume } from "../../src/store/changes/resume.js";
import { expireOwedLook, skip } from "../../src/store/changes/skip.js";
import { stop } from "../../src/store/changes/stop.js";
import type { OpenStoreOptions } from "../../src/store/open.js";
import type { OperatorStore } from "../../src/store/operator.js";
import { registerOwner, unregisterOwner } from "../../src/store/owner.js";
import { sinceIdle } from "../../src/store/reads.js";
import { q } from "../../src/store/script.js";
import { newRows } from "../support/new-rows.js";

/** A fresh, empty database of one backend. */
export interface ContractDatabase {
  /** Another connection to it: another process's view (a TUI's, with `kind: "tui"`). */
  open(options?: OpenStoreOptions): Promise<OperatorStore>;
}

interface World {
  a: OperatorStore;
  b: OperatorStore;
  database: ContractDatabase;
  /** Rows matching `from` (`SELECT count(*) FROM <from>`). */
  count(from: string): Promise<number>;
  /** The audit trail (`event:reason`) of one session, in order. */
  trail(sessionId: string): Promise<string[]>;
}

export interface ContractCase {
  name: string;
  run(world: World): Promise<void>;
}

const NOW = Date.now();
/** A reader's time well after every row a case writes: a look that began at NOW and reads now has seen them all. */
const LATER = NOW + 600_000;
/** Two processes on other hosts: alive while their leases hold (SQLite) and their heartbeats are fresh (PostgreSQL). */
const ME = "host-a/1/aaaa";
const OTHER = "host-b/2/bbbb";
const { countdown, injection } = newRows(NOW, ME);
const S1 = { sessionId: "ses_1", directory: "/p" };
const POLICY: OutcomePolicy = { maxRetries: 3, retryBaseMs: 5000, retryMaxMs: 60_000, startTimeoutMs: 10_000 };

export async function withWorld(database: ContractDatabase, run: (world: World) => Promise<void>): Promise<void> {
  const a = await database.open();
  const b = await database.open();
  try {
    await a.heartbeat(ME, 15_000);
    await b.heartbeat(OTHER, 15_000);
    const count = async (from: string) =>
      Number((await a.reader.all<{ n: number | string }>(`SELECT count(*) AS n FROM ${from}`))[0]!.n);
    const trail = async (sessionId: string) =>
      (
        await a.reader.all<{ event: string; reason: string | null }>(
          "SELECT event, reason FROM audit_events WHERE session_id = ? ORDER BY id",
          sessionId,
        )
      ).map((r) => (r.reason ? `${r.event}:${r.reason}` : r.event));
    await run({ a, b, database, count, trail });
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

export const CONTRACT_CASES: ContractCase[] = [
  {
    name: "arm: one armed countdown per session; a new one supersedes, a live foreign owner's is respected",
    async run({ a, b, count, trail }) {
      assert.equal((await a.change(arm(countdown("cd1"), {}))).armed, true);
      assert.equal((await a.read(q.session("ses_1"))) ?? null, null, "arming alone writes no session row");
      const second = await a.change(arm(countdown("cd2", "ses_1", { armedAt: NOW + 1 }), {}));
      assert.equal(second.armed, true);
      assert.equal(second.superseded?.id, "cd1");
      assert.equal((await a.read(q.countdown("cd1")))?.state, "cancelled");
      assert.equal((await a.read(q.countdown("cd1")))?.endReason, "superseded");
      const held = await b.change(arm(countdown("cd3", "ses_1", { owner: OTHER, armedAt: NOW + 2 }), { why: "t" }));
      assert.deepEqual(held, { armed: false, heldBy: { id: "cd2", owner: ME, leaseUntil: NOW + 15_000 } });
      assert.deepEqual(await trail("ses_1"), ["armed", "cancelled:superseded", "armed", "skipped:in_flight"]);
      // Every row about a countdown names it first in its detail.
      const details = await a.reader.all<{ detail: string }>("SELECT detail FROM audit_events ORDER BY id");
      assert.deepEqual(
        details.map((d) => Object.keys(JSON.parse(d.detail) as object)[0]),
        ["countdownId", "countdownId", "countdownId", "countdownId"],
      );
      assert.equal(await count("countdowns WHERE state = 'armed'"), 1);
      await a.change(arm(countdown("cd4", "ses_2"), {}, { sessionPatch: { agent: "build" } }));
      assert.equal((await a.read(q.session("ses_2")))?.agent, "build", "a patch given with the arming writes the row");
    },
  },
  {
    name: "arm: of many processes arming one session at once, each round has one winner",
    async run({ a, b, count }) {
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? a : b).change(arm(countdown(`cd${i}`, "ses_race", { owner: i % 2 ? ME : OTHER }), {})),
        ),
      );
      // Two live owners: a countdown of the other one is respected, one of its own is superseded.
      assert.equal(await count("countdowns WHERE state = 'armed' AND session_id = 'ses_race'"), 1);
      const won = results.filter((r) => r.armed).length;
      assert.equal(await count("countdowns WHERE session_id = 'ses_race'"), won);
    },
  },
  {
    name: "arm: a continuation fired since the idle answers it; refused ones answer nothing",
    async run({ a, b, count }) {
      await a.change(arm(countdown("cd1"), {}));
      assert.equal(await a.change(claim(injection("inj_a", "cd1"), {})), true); // fired at NOW + 2000
      const firedAt = NOW + 2000;
      assert.deepEqual(await b.read(q.continuedSince("ses_1", NOW, LATER)), { injectionId: "inj_a", firedAt });
      assert.deepEqual(await b.read(q.continuedSince("ses_1", firedAt, LATER)), { injectionId: "inj_a", firedAt });
      assert.equal(
        await b.read(q.continuedSince("ses_1", firedAt + 1, firedAt + 1)),
        undefined,
        "a look begun after it",
      );
      assert.equal(await b.read(q.continuedSince("ses_2", NOW, LATER)), undefined);
      const refused = { kind: "failed", error: "refused", final: false, detail: {} } as const;
      await a.change(recordOutcome(injection("inj_a", "cd1"), refused, NOW + 2100, POLICY));
      assert.equal(await b.read(q.continuedSince("ses_1", NOW, LATER)), undefined);
      await a.change(arm(countdown("cd2", "ses_1", { armedAt: NOW + 2200 }), {}));
      await a.change(claim(injection("inj_b", "cd2", { createdAt: NOW + 2500 }), {}));
      const lost = { kind: "unknown", error: "timeout", timedOut: true, final: false, detail: {} } as const;
      await a.change(recordOutcome(injection("inj_b", "cd2"), lost, NOW + 2600, POLICY));
      const answered = { injectionId: "inj_b", firedAt: NOW + 2500 };
      assert.deepEqual(await b.read(q.continuedSince("ses_1", NOW, LATER)), answered);
      const late = countdown("cd3", "ses_1", { owner: OTHER, armedAt: LATER });
      assert.deepEqual(await b.change(arm(late, { trigger: "idle" }, { answeredSince: NOW + 1000 })), {
        armed: false,
        answeredBy: answered,
      });
      assert.equal(await b.read(q.countdown("cd3")), undefined);
      const skips = await a.reader.all<{ detail: string }>(
        "SELECT detail FROM audit_events WHERE event = 'skipped' AND reason = 'in_flight'",
      );
      assert.deepEqual(
        skips.map((r) => JSON.parse(r.detail) as unknown),
        [{ stage: "idle", answeredBy: "inj_b", firedAt: NOW + 2500, trigger: "idle" }],
      );
      // A look that began after the continuation (just now) judges a new idle.
      const next = countdown("cd4", "ses_1", { owner: OTHER, armedAt: NOW + 3000 });
      assert.equal((await b.change(arm(next, {}, { answeredSince: NOW + 3000 }))).armed, true);
      assert.equal(await count("countdowns WHERE state = 'armed'"), 1);
    },
  },
  {
    name: "end: once; a second end writes nothing, and its session change applies all the same",
    async run({ a, trail }) {
      await a.change(arm(countdown("cd1"), {}));
      const ref = { id: "cd1", sessionId: "ses_1", directory: "/p" };
      assert.equal(await a.change(end(ref, { cancelled: "user_message" }, NOW + 1)), true);
      const expired = { expired: { lateMs: 1 } };
      assert.equal(await a.change(end(ref, expired, NOW + 2, { recoveringSince: NOW })), false);
      assert.equal((await a.read(q.countdown("cd1")))?.endReason, "user_message");
      assert.equal((await a.read(q.session("ses_1")))?.recoveringSince, NOW);
      await a.change(arm(countdown("cd2", "ses_1", { armedAt: NOW + 3 }), {}));
      const skipped = { skipped: "todos_complete", detail: { stage: "deadline" } } as const;
      assert.equal(await a.change(end({ ...ref, id: "cd2" }, skipped, NOW + 4)), true);
      assert.equal((await a.read(q.countdown("cd2")))?.endReason, "todos_complete");
      assert.deepEqual(await trail("ses_1"), ["armed", "cancelled:user_message", "armed", "skipped:todos_complete"]);
    },
  },
  {
    name: "cancel-by-key and stop end the armed countdown; the key also drops the look owed",
    async run({ a, b, trail }) {
      await a.change(arm(countdown("cd1"), {}));
      await a.change(changeSession(S1, NOW, { recheckAt: NOW + 5000 }));
      assert.equal((await b.change(cancelByKey(S1, NOW + 1, { via: "escape" })))?.id, "cd1");
      assert.equal((await a.read(q.session("ses_1")))?.recheckAt, null);
      assert.equal(await b.change(cancelByKey(S1, NOW + 2, {})), undefined);
      assert.equal(await a.change(claim(injection("i1", "cd1"), {})), false, "a cancelled countdown cannot fire");
      await a.change(arm(countdown("cd2", "ses_1", { armedAt: NOW + 3 }), {}));
      const stopped = await b.change(stop(S1, "cli", NOW + 4));
      assert.deepEqual(
        { changed: stopped.changed, cancelled: stopped.cancelled?.id },
        { changed: true, cancelled: "cd2" },
      );
      assert.deepEqual(await a.change(stop(S1, "tui", NOW + 5)), { changed: false });
      assert.equal((await a.read(q.session("ses_1")))?.stoppedAt, NOW + 4);
      assert.deepEqual(await trail("ses_1"), [
        "armed",
        "cancelled:user_key",
        "armed",
        "stopped:cli",
        "cancelled:stopped",
      ]);
      // A look that began before the key finds it; one that began after, or another session, does not.
      assert.equal(await a.read(q.userCancelledSince("ses_1", NOW, LATER)), NOW + 1);
      assert.equal(await a.read(q.userCancelledSince("ses_1", NOW + 2, NOW + 2)), undefined);
      assert.equal(await a.read(q.userCancelledSince("ses_2", NOW, LATER)), undefined);
    },
  },
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
      await a.change(changeSession(S1, NOW + 3, { stoppedAt: NOW, recheckAt: null, continuations: 4 }));
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
  {
    name: "bills: written once whoever writes first, added to the session's spend in its window, summed for the day",
    async run({ a, b }) {
      const bill = (injectionId: string, continuedAt: number, cost: number, tokens: number) => ({
        injectionId,
        sessionId: "ses_1",
        directory: "/p",
        messageId: `msg_${injectionId}`,
        continuedAt,
        recordedAt: NOW,
        outcome: "completed" as const,
        modelId: "model-1",
        messages: 2,
        steps: 3,
        inputTokens: tokens - 10,
        outputTokens: 10,
        tokens,
        cost,
      });
      await a.change(changeSession(S1, NOW, { lastUserMessageAt: NOW - 100 }));
      const withWork = { ...bill("i3", NOW - 30, 0.1, 100), filesChanged: 2, sessionCost: 4.5, sessionTokens: 9000 };
      assert.equal(await a.change(recordBill(S1, withWork, NOW)), true);
      // Two processes bill the same turn at once: one row, counted once.
      const racing = await Promise.all(
        [a, b, a].map((s) => s.change(recordBill(S1, bill("i1", NOW - 50, 0.25, 1200), NOW))),
      );
      assert.deepEqual(racing.filter(Boolean).length, 1);
      assert.equal(await b.change(recordBill(S1, bill("i2", NOW - 40, 0.5, 3000), NOW)), true);
      // A continuation sent before the person's last message is history: billed, not counted in the window.
      assert.equal(await b.change(recordBill(S1, bill("i0", NOW - 500, 7, 99), NOW)), true);
      const row = (await a.read(q.session("ses_1")))!;
      assert.deepEqual([row.continuationCost, row.continuationTokens], [0.85, 4300]);
      assert.deepEqual(await a.read(q.recentBills("ses_1", 2)), [
        { cost: 0.1, tokens: 100 },
        { cost: 0.5, tokens: 3000 },
      ]);
      assert.equal(await b.read(q.spentSince(NOW - 60_000)), 7.85);
      const [written] = await a.reader.all<Record<string, unknown>>(
        `SELECT sum(continuations) AS n, sum(cost) AS cost, sum(files_changed) AS files, max(session_cost) AS spend
         FROM continuation_costs WHERE session_id = ?`,
        "ses_1",
      );
      assert.deepEqual([written!.n, written!.cost, written!.files, written!.spend].map(Number), [4, 7.85, 2, 4.5]);
      // A resume starts a new allowance.
      await a.change(resume(S1, "cli", NOW + 1));
      const resumed = (await a.read(q.session("ses_1")))!;
      assert.deepEqual([resumed.continuationCost, resumed.continuationTokens], [0, 0]);
    },
  },
  {
    name: "unbilled: the scope's continuations that went out without a bill, oldest first, from a time on",
    async run({ a, b }) {
      const sent = { kind: "sent", latencyMs: 5, detail: {} } as const;
      const fire = async (n: number, sessionId: string, settle: boolean) => {
        await a.change(arm(countdown(`cd${n}`, sessionId), {}));
        await a.change(claim(injection(`i${n}`, `cd${n}`, { sessionId, createdAt: NOW + n }), {}));
        if (settle) await a.change(recordOutcome(injection(`i${n}`, `cd${n}`, { sessionId }), sent, NOW + 10, POLICY));
      };
      await fire(1, "ses_1", true);
      await fire(2, "ses_2", true);
      await fire(3, "ses_3", false); // still pending: its call is under way
      await fire(4, "ses_4", true);
      await b.change(
        recordBill(
          { sessionId: "ses_2", directory: "/p" },
          {
            injectionId: "i2",
            sessionId: "ses_2",
            directory: "/p",
            messageId: "msg_i2",
            continuedAt: NOW + 2,
            recordedAt: NOW + 20,
            outcome: "completed",
          },
          NOW + 20,
        ),
      );
      assert.deepEqual(await b.read(q.unbilledIn({ directory: "/p" }, NOW)), [
        { injectionId: "i1", sessionId: "ses_1" },
        { injectionId: "i4", sessionId: "ses_4" },
      ]);
      assert.deepEqual(await a.read(q.unbilledIn({ directory: "/p" }, NOW + 2)), [
        { injectionId: "i4", sessionId: "ses_4" },
      ]);
      assert.deepEqual(await a.read(q.unbilledIn({ directory: "/elsewhere" }, NOW)), []);
    },
  },
  {
    name: "claim: only the owner, only while armed, one winner among racing claims; one transaction",
    async run({ a, b, count }) {
      await a.change(arm(countdown("cd1"), {}));
      assert.equal(await b.change(claim(injection("i0", "cd1", { owner: OTHER }), {})), false);
      const claims = await Promise.all(["i1", "i2", "i3"].map((id) => a.change(claim(injection(id, "cd1"), {}))));
      assert.equal(claims.filter(Boolean).length, 1);
      assert.equal(await count("injections WHERE countdown_id = 'cd1' AND status = 'pending'"), 1);
      assert.equal((await a.read(q.countdown("cd1")))?.state, "fired");
      assert.equal(await b.read(q.hasPendingInjection("ses_1")), true);
      // An injection that cannot be written (its id taken) rolls the countdown's move to fired back.
      await a.change(arm(countdown("cd2", "ses_2"), {}));
      const taken = injection(claims[0] ? "i1" : claims[1] ? "i2" : "i3", "cd2", { sessionId: "ses_2" });
      await assert.rejects(a.change(claim(taken, {})));
      assert.equal((await a.read(q.countdown("cd2")))?.state, "armed");
      assert.equal(await count("audit_events WHERE event = 'fired'"), 1);
    },
  },
  {
    name: "record-outcome: once per injection, with the session's counts and retry plan from its row",
    async run({ a, b, trail }) {
      await a.change(arm(countdown("cd1"), {}));
      await a.change(claim(injection("i1", "cd1"), {}));
      const lost = { kind: "unknown", error: "lost", timedOut: false, final: false, detail: {} } as const;
      const refused = { kind: "failed", error: "lost", final: false, detail: {} } as const;
      const [one, two] = await Promise.all([
        a.change(recordOutcome(injection("i1", "cd1"), lost, NOW + 2100, POLICY)),
        b.change(recordOutcome(injection("i1", "cd1"), refused, NOW + 2100, POLICY)),
      ]);
      assert.equal([one, two].filter(Boolean).length, 1);
      assert.deepEqual((one ?? two)!.next, { retry: true, attempt: 1, delayMs: 5000 });
      assert.equal((await a.read(q.session("ses_1")))?.consecutiveFailures, 1);
      assert.equal((await a.read(q.uncertainIn("ses_1", NOW))).length, 1);
      const arrived = { kind: "arrived", was: one ? "unknown" : "failed" } as const;
      assert.ok(await b.change(recordOutcome(injection("i1", "cd1"), arrived, NOW + 2200, POLICY)));
      assert.equal(await a.change(recordOutcome(injection("i1", "cd1"), arrived, NOW + 2300, POLICY)), undefined);
      const row = (await a.read(q.session("ses_1")))!;
      assert.deepEqual([row.continuations, row.consecutiveFailures], [1, 0]);
      assert.equal((await a.read(q.injection("i1")))?.status, "sent");
      // A continuation sent: one more, and a look owed once its turn should have started.
      await a.change(arm(countdown("cd2", "ses_1", { armedAt: NOW + 3000 }), {}));
      await a.change(claim(injection("i2", "cd2", { createdAt: NOW + 5000 }), {}));
      const sent = { kind: "sent", latencyMs: 12.4, detail: { countdownId: "cd2" } } as const;
      assert.deepEqual(await a.change(recordOutcome(injection("i2", "cd2"), sent, NOW + 5100, POLICY)), {
        next: undefined,
      });
      const afterSent = (await a.read(q.session("ses_1")))!;
      assert.deepEqual([afterSent.continuations, afterSent.recheckAt], [2, NOW + 5100 + 10_000]);
      const notStarted = { kind: "not_started", waitedMs: 10_000 } as const;
      const recorded = await a.change(recordOutcome({ ...S1, id: "i2" }, notStarted, NOW + 16_000, POLICY));
      assert.deepEqual(recorded?.next, { retry: true, attempt: 1, delayMs: 5000 });
      assert.deepEqual(await trail("ses_1"), [
        "armed",
        "fired",
        "injection_failed:retrying",
        "reconciled:found",
        "armed",
        "fired",
        "injected",
        "injection_failed:not_started",
      ]);
      const last = await a.reader.all<{ detail: string }>(
        "SELECT detail FROM audit_events WHERE event = 'injected' ORDER BY id DESC LIMIT 1",
      );
      assert.deepEqual(JSON.parse(last[0]!.detail), { injectionId: "i2", latencyMs: 12, countdownId: "cd2" });
    },
  },
  {
    name: "record-outcome: a pending row left by a dead process is reconciled once, found or not",
    async run({ a, b, trail }) {
      await a.change(arm(countdown("cd1"), {}));
      await a.change(claim(injection("i1", "cd1"), {}));
      const notFound = { kind: "reconciled", found: false } as const;
      const [x, y] = await Promise.all([
        a.change(recordOutcome(injection("i1", "cd1"), notFound, NOW + 3000, POLICY)),
        b.change(recordOutcome(injection("i1", "cd1"), notFound, NOW + 3000, POLICY)),
      ]);
      assert.equal([x, y].filter(Boolean).length, 1);
      const row = await a.read(q.injection("i1"));
      assert.deepEqual([row?.status, row?.error], ["unknown", "not found in the session after a restart"]);
      assert.equal((await a.read(q.session("ses_1")))?.continuations, 1, "possibly delivered: counted");
      await a.change(arm(countdown("cd2", "ses_1", { armedAt: NOW + 4000 }), {}));
      await a.change(claim(injection("i2", "cd2"), {}));
      await b.change(recordOutcome(injection("i2", "cd2"), { kind: "reconciled", found: true }, NOW + 5000, POLICY));
      assert.equal((await a.read(q.injection("i2")))?.status, "sent");
      assert.deepEqual(
        (await trail("ses_1")).filter((e) => e.startsWith("reconciled")),
        ["reconciled:not_found", "reconciled:found"],
      );
    },
  },
  {
    name: "adopt: an orphan is taken once, from the owner it was seen with; renew and release by scope",
    async run({ a, b, count }) {
      await a.change(arm(countdown("cd1", "ses_1", { owner: "gone-host/9/dead", leaseUntil: NOW + 1000 }), {}));
      const row = (await a.read(q.countdown("cd1")))!;
      const orphan: Orphan = { countdown: row, verdict: { action: "rearm", remainingMs: 2000 } };
      const stale: Orphan = { ...orphan, countdown: { ...row, owner: "someone-else/1/x" } };
      const adoption = (owner: string) =>
        ({ reason: "lease_expired", owner, leaseUntil: NOW + 5000, now: NOW, resumeWindowMs: 60_000 }) as const;
      assert.deepEqual(await a.change(adoptChunk([stale], adoption(ME))), [false]);
      const [x, y] = await Promise.all([adopt(a, [orphan], adoption(ME)), adopt(b, [orphan], adoption(OTHER))]);
      assert.equal([...x, ...y].filter(Boolean).length, 1);
      assert.equal(await count("audit_events WHERE event = 'resumed' AND reason = 'lease_expired'"), 1);
      const owner = (await a.read(q.countdown("cd1")))!.owner!;
      assert.ok([ME, OTHER].includes(owner));
      assert.equal(await a.change(renewLeases(owner, NOW + 20_000)), 1);
      assert.equal((await b.read(q.countdown("cd1")))?.leaseUntil, NOW + 20_000);
      assert.equal(await a.change(releaseLeases(owner, { directory: "/other" })), 0);
      assert.equal(await a.change(releaseLeases(owner, { directory: "/p", server: "pod-a" })), 0);
      assert.equal(await a.change(releaseLeases(owner, { directory: "/p" })), 1);
      const released = (await a.read(q.countdown("cd1")))!;
      assert.equal(released.owner, null);
      const expire: Orphan = { countdown: released, verdict: { action: "expire", lateMs: 120_000 } };
      assert.deepEqual(await adopt(b, [expire], adoption(OTHER)), [true]);
      assert.equal((await a.read(q.countdown("cd1")))?.state, "expired");
      const expired = await a.reader.all<{ reason: string; detail: string }>(
        "SELECT reason, detail FROM audit_events WHERE event = 'expired'",
      );
      assert.deepEqual(
        expired.map((e) => [e.reason, JSON.parse(e.detail) as unknown]),
        [
          [
            "stale_after_restart",
            {
              countdownId: "cd1",
              previousOwner: null,
              deadlineAt: NOW + 2000,
              lateMs: 120_000,
              resumeWindowMs: 60_000,
            },
          ],
        ],
      );
    },
  },
  {
    name: "adopt: a batch of orphans seen with several owners, kept and expired, each taken and audited once in order",
    async run({ a, b, count }) {
      const owners = ["gone-host/7/dead", "gone-host/9/dead", "gone-host/8/dead"];
      for (let i = 0; i < 6; i++)
        await a.change(arm(countdown(`cd${i}`, `ses_${i}`, { owner: owners[i % 3]!, leaseUntil: NOW - 1 }), {}));
      const rows = await Promise.all([0, 1, 2, 3, 4, 5].map(async (i) => (await a.read(q.countdown(`cd${i}`)))!));
      const orphans: Orphan[] = rows.map((row, i) => ({
        countdown: row,
        verdict: i % 2 === 0 ? { action: "fire", lateMs: 10 } : { action: "expire", lateMs: 120_000 },
      }));
      // One orphan was seen with an owner it no longer has: not taken, not audited.
      orphans[5] = { ...orphans[5]!, countdown: { ...orphans[5]!.countdown, owner: "someone-else/1/x" } };
      const adoption = (owner: string) =>
        ({ reason: "restart", owner, leaseUntil: NOW + 5000, now: NOW, resumeWindowMs: 60_000 }) as const;
      const [x, y] = await Promise.all([
        a.change(adoptChunk(orphans, adoption(ME))),
        b.change(adoptChunk(orphans, adoption(OTHER))),
      ]);
      assert.deepEqual(
        x.map((taken, i) => taken || y[i]),
        [true, true, true, true, true, false],
      );
      const audited = await a.reader.all<{ event: string; detail: string }>(
        "SELECT event, detail FROM audit_events WHERE event IN ('resumed', 'expired') ORDER BY id",
      );
      assert.deepEqual(
        audited.map((r) => [r.event, (JSON.parse(r.detail) as { countdownId: string }).countdownId]).sort(),
        [
          ["expired", "cd1"],
          ["expired", "cd3"],
          ["resumed", "cd0"],
          ["resumed", "cd2"],
          ["resumed", "cd4"],
        ],
      );
      // Each writer's rows in the orphans' order.
      for (const writer of [x, y]) {
        const mine = audited
          .map((r) => (JSON.parse(r.detail) as { countdownId: string }).countdownId)
          .filter((id) => writer[Number(id.slice(2))]);
        assert.deepEqual(mine, [...mine].sort());
      }
      assert.equal(await count("countdowns WHERE state = 'expired'"), 2);
      assert.equal(await count("countdowns WHERE state = 'armed' AND owner IN ('" + ME + "', '" + OTHER + "')"), 3);
      assert.equal((await a.read(q.countdown("cd5")))?.owner, "gone-host/8/dead");
      const kept = rows.filter((_, i) => i % 2 === 0).map((r) => r.id);
      for (const id of kept) assert.equal((await a.read(q.countdown(id)))?.leaseUntil, NOW + 5000);
    },
  },
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
  {
    name: "skip and expire-owed-look: the decision's row with the session change that goes with it",
    async run({ a, trail }) {
      await a.change(skip(S1, NOW, "todos_complete", { stage: "idle" }));
      assert.equal(await a.read(q.session("ses_1")), undefined, "a skip alone writes no session row");
      const owed = { recheckAt: NOW + 5000, owedSince: NOW - 700 };
      await a.change(skip(S1, NOW + 1, "todo_fetch_failed", { attempt: 1 }, owed));
      assert.deepEqual(await a.read(q.sessionsToRecheck({ directory: "/p" }, NOW + 5000)), [
        { sessionId: "ses_1", ...owed },
      ]);
      // A look owed anew without an idle of its own judges one as old as itself, never the earlier look's.
      await a.change(changeSession(S1, NOW + 2, { recheckAt: NOW + 6000 }));
      assert.deepEqual(await a.read(q.sessionsToRecheck({ directory: "/p" }, NOW + 6000)), [
        { sessionId: "ses_1", recheckAt: NOW + 6000, owedSince: null },
      ]);
      await a.change(expireOwedLook(S1, NOW + 2, { lateMs: 61_000 }));
      assert.deepEqual(await a.read(q.sessionsToRecheck({ directory: "/p" }, NOW + 5000)), []);
      assert.deepEqual(await trail("ses_1"), [
        "skipped:todos_complete",
        "skipped:todo_fetch_failed",
        "expired:stale_after_restart",
      ]);
    },
  },
  {
    name: "reads: what answered an idle since, in one read",
    async run({ a, b }) {
      assert.deepEqual(await a.read(sinceIdle("ses_1", NOW)), {
        row: undefined,
        pending: false,
        userCancelledAt: undefined,
        answeredBy: undefined,
      });
      await a.change(changeSession(S1, NOW, { agent: "build" }));
      await a.change(arm(countdown("cd1"), {}));
      await b.change(cancelByKey(S1, NOW + 10, {}));
      await a.change(arm(countdown("cd2", "ses_1", { armedAt: NOW + 20 }), {}));
      await a.change(claim(injection("i2", "cd2"), {}));
      const seen = await b.read(sinceIdle("ses_1", NOW, LATER));
      assert.equal(seen.row?.agent, "build");
      assert.deepEqual(
        [seen.pending, seen.userCancelledAt, seen.answeredBy],
        [true, NOW + 10, { injectionId: "i2", firedAt: NOW + 2000 }],
      );
      assert.deepEqual((await b.read(sinceIdle("ses_1"))).answeredBy, undefined, "no idle: only the row");
    },
  },
  {
    name: "scopes: pods that share a directory path never see each other's rows",
    async run({ a, b, count }) {
      const scopes = [{ server: null }, { server: "pod-a" }, { server: "pod-b" }] as const;
      for (const [i, { server }] of scopes.entries()) {
        const sessionId = `ses_${i}`;
        await a.change(arm(countdown(`cd${i}`, sessionId, { server }), {}));
        await a.change(changeSession({ sessionId, directory: "/p", server }, NOW, { recheckAt: NOW }));
      }
      await a.change(claim(injection("i1", "cd1", { sessionId: "ses_1", server: "pod-a" }), {}));
      for (const [i, { server }] of scopes.entries()) {
        const scope = { directory: "/p", server };
        assert.deepEqual(
          (await b.read(q.armedIn(scope))).map((c) => [c.id, c.server]),
          i === 1 ? [] : [[`cd${i}`, server]],
        );
        assert.deepEqual(
          (await b.read(q.pendingIn(scope))).map((r) => r.id),
          i === 1 ? ["i1"] : [],
        );
        assert.deepEqual(
          (await b.read(q.sessionsToRecheck(scope, NOW))).map((r) => r.sessionId),
          [`ses_${i}`],
        );
        assert.equal((await b.read(q.session(`ses_${i}`)))?.server, server);
      }
      // An absent server is the machine's own (NULL), not "any".
      assert.deepEqual(
        (await b.read(q.armedIn({ directory: "/p" }))).map((c) => c.id),
        ["cd0"],
      );
      assert.equal(await count("audit_events WHERE server = 'pod-a' AND event IN ('armed', 'fired')"), 2);
      assert.equal(await a.change(releaseLeases(ME, { directory: "/p", server: "pod-b" })), 1);
      assert.equal((await b.read(q.countdown("cd2")))?.owner, null);
      assert.equal((await b.read(q.countdown("cd0")))?.owner, ME);
    },
  },
  {
    name: "prune: settled history older than the cutoff goes; what is still live stays",
    async run({ a, b }) {
      await a.change(arm(countdown("cd1", "ses_1", { armedAt: 1000, deadlineAt: 2000 }), {}));
      await a.change(arm(countdown("cd2", "ses_2", { armedAt: 1000, deadlineAt: 2000 }), {}));
      await a.change(end({ id: "cd2", sessionId: "ses_2", directory: "/p" }, { expired: {} }, 1500));
      await a.change(changeSession({ sessionId: "ses_3", directory: "/p" }, 1000, { deletedAt: 1200 }));
      const bill = (injectionId: string, recordedAt: number) => ({
        injectionId,
        sessionId: "ses_2",
        directory: "/p",
        messageId: `msg_${injectionId}`,
        continuedAt: recordedAt - 10,
        recordedAt,
        outcome: "completed" as const,
      });
      await a.change(recordBill({ sessionId: "ses_2", directory: "/p" }, bill("i_old", 1000), 1000));
      await a.change(recordBill({ sessionId: "ses_2", directory: "/p" }, bill("i_new", NOW), NOW));
      const dry = await prune(b, { cutoff: NOW, dryRun: true });
      assert.deepEqual([dry.countdowns, dry.sessions, dry.auditEvents, dry.bills], [1, 1, 3, 1]);
      const report = await prune(b, { cutoff: NOW, batchSize: 2, pauseMs: 0 });
      assert.deepEqual([report.countdowns, report.sessions, report.auditEvents, report.bills], [1, 1, 3, 1]);
      assert.equal(report.batches, 6);
      const bills = await a.reader.all<{ id: string }>("SELECT injection_id AS id FROM continuation_bills");
      assert.deepEqual(
        bills.map((r) => r.id),
        ["i_new"],
      );
      assert.ok(await a.read(q.countdown("cd1")), "armed countdowns are never history");
      assert.equal(await a.read(q.countdown("cd2")), undefined);
    },
  },
  {
    name: "liveness: a heartbeat is a row an operator sees; retire removes it; owners judged alive or gone",
    async run({ a, b }) {
      const replicas = await b.replicas();
      const mine = replicas.find((r) => r.id === ME);
      assert.ok(mine, "the heartbeat's row");
      assert.deepEqual([mine.kind, mine.host, mine.pid, mine.leaseMs], ["plugin", "host-a", 1, 15_000]);
      assert.equal(mine.alive, true);
      await a.heartbeat(ME, 15_000);
      assert.equal(a.ownerAlive(OTHER, NOW + 15_000, NOW), true);
      assert.equal(a.ownerAlive(null, null, NOW), false);
      const here = `${hostname()}/${process.pid}/gone`;
      assert.equal(a.ownerAlive(here, NOW + 15_000, NOW), false, "an owner of this process that is not running");
      registerOwner(here);
      try {
        await b.heartbeat(here, 15_000);
        await a.heartbeat(ME, 15_000);
        assert.equal(a.ownerAlive(here, NOW + 15_000, NOW), true);
        assert.equal((await a.liveness())(here), true);
      } finally {
        unregisterOwner(here);
      }
      await b.retire(OTHER);
      assert.equal(
        (await a.replicas()).some((r) => r.id === OTHER),
        false,
      );
    },
  },
  {
    name: "who is there: a TUI's heartbeat says it draws its folder's countdowns, while it is fresh and until retired",
    async run({ a, database }) {
      const tui = await database.open({ kind: "tui" });
      // This process's pid, never registered here: the TUI of an OpenCode whose server plugin runs in a worker.
      const TUI = `${hostname()}/${process.pid}/tui`;
      try {
        assert.equal(await a.read(q.tuiWatching("/p", Date.now())), false, "no TUI yet");
        await tui.heartbeat(TUI, 15_000, "/p");
        assert.equal(await a.read(q.tuiWatching("/p", Date.now())), true);
        await a.heartbeat(ME, 15_000);
        assert.equal(await a.read(q.tuiWatching("/p", Date.now())), true, "kept by another heartbeat of its pid");
        assert.equal(await a.read(q.tuiWatching("/elsewhere", Date.now())), false, "another folder's TUI");
        assert.equal((await a.replicas()).find((r) => r.id === TUI)?.kind, "tui");
        // A plugin's heartbeat names no folder and draws nothing.
        assert.equal(await a.read(q.tuiWatching("", Date.now())), false);
        // A lease that ran out: a TUI that crashed (by the database's clock on PostgreSQL, where `now` is not used).
        await tui.heartbeat(TUI, 1, "/p");
        await new Promise((resolve) => setTimeout(resolve, 20));
        assert.equal(await a.read(q.tuiWatching("/p", Date.now())), false, "a heartbeat past its lease");
        await tui.heartbeat(TUI, 15_000, "/p");
        await tui.retire(TUI);
        assert.equal(await a.read(q.tuiWatching("/p", Date.now())), false, "a TUI that said it is gone");
      } finally {
        await tui.close();
      }
    },
  },
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
