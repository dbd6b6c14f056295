// The storage behaviour, written once and run under both runtimes: vitest runs these under Node with
// better-sqlite3, and bun-runner.ts runs them under OpenCode's Bun with bun:sqlite.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore, StoreOpenError, type Store } from "../../src/store/sqlite/open.js";
import type { NewCountdown, NewInjection } from "../../src/store/port.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

export interface StoreCase {
  name: string;
  run(folder: string): Promise<void>;
}

const NOW = 1_800_000_000_000;

function countdown(id: string, sessionId = "ses_1", extra: Partial<NewCountdown> = {}): NewCountdown {
  return {
    id,
    sessionId,
    directory: "/p",
    armedAt: NOW,
    deadlineAt: NOW + 2000,
    owner: "me",
    leaseUntil: NOW + 15_000,
    attempt: 0,
    todosOpen: 2,
    todosTotal: 3,
    ...extra,
  };
}

function injection(id: string, countdownId: string, extra: Partial<NewInjection> = {}): NewInjection {
  return {
    id,
    sessionId: "ses_1",
    directory: "/p",
    countdownId,
    messageId: `msg_${id}`,
    createdAt: NOW + 2000,
    agent: "build",
    model: "p/m",
    variant: null,
    todosTotal: 3,
    todosOpen: 2,
    attempt: 0,
    owner: "me",
    leaseUntil: NOW + 60_000,
    ...extra,
  };
}

async function withStore(
  folder: string,
  work: (store: Store, port: SqliteStore) => void | Promise<void>,
): Promise<void> {
  const store = await openStore(join(folder, "nested", "dir", "state.db"));
  try {
    await work(store, new SqliteStore(store));
  } finally {
    store.close();
  }
}

const count = (store: Store, sql: string, ...params: unknown[]) =>
  store.raw.all<{ n: number }>(`SELECT count(*) AS n FROM ${sql}`, ...params)[0]!.n;

export const STORE_CASES: StoreCase[] = [
  {
    name: "creates the folder and an owner-only file, and sets the PRAGMAs",
    async run(folder) {
      await withStore(folder, (store) => {
        assert.equal(statSync(store.path).mode & 0o777, 0o600);
        assert.equal(statSync(join(folder, "nested", "dir")).mode & 0o777, 0o700);
        assert.equal(store.raw.all<{ journal_mode: string }>("PRAGMA journal_mode")[0]!.journal_mode, "wal");
        assert.equal(store.raw.all<{ synchronous: number }>("PRAGMA synchronous")[0]!.synchronous, 1);
        assert.equal(store.raw.all<{ timeout: number }>("PRAGMA busy_timeout")[0]!.timeout, 5000);
        assert.equal(store.raw.all<{ foreign_keys: number }>("PRAGMA foreign_keys")[0]!.foreign_keys, 1);
      });
    },
  },
  {
    name: "migrates at the first open and applies nothing at the next",
    async run(folder) {
      await withStore(folder, (store) => {
        assert.equal(store.migration.applied, store.migration.shipped);
        assert.ok(store.migration.shipped >= 1);
      });
      await withStore(folder, (store) => {
        assert.equal(store.migration.applied, 0);
        assert.equal(count(store, "__drizzle_migrations"), store.migration.shipped);
        for (const table of ["sessions", "countdowns", "injections", "audit_events"]) {
          assert.equal(count(store, "sqlite_master WHERE type = 'table' AND name = ?", table), 1, table);
        }
      });
    },
  },
  {
    name: "arming supersedes the armed countdown of the session, and the database allows only one armed per session",
    async run(folder) {
      await withStore(folder, async (store, port) => {
        await port.armCountdown(countdown("cd_1"), {});
        const { superseded } = await port.armCountdown(countdown("cd_2", "ses_1", { armedAt: NOW + 100 }), {});
        assert.equal(superseded?.id, "cd_1");
        assert.equal((await port.countdown("cd_1"))?.state, "cancelled");
        assert.equal((await port.countdown("cd_1"))?.endReason, "superseded");
        assert.deepEqual(
          (await port.armedCountdowns({ directory: "/p" })).map((c) => c.id),
          ["cd_2"],
        );
        assert.throws(() =>
          store.raw.run(
            "INSERT INTO countdowns (id, session_id, directory, armed_at, deadline_at, state) VALUES ('cd_x', 'ses_1', '/p', 1, 2, 'armed')",
          ),
        );
        assert.throws(() => store.raw.run("UPDATE countdowns SET state = 'bogus' WHERE id = 'cd_2'"));
        const events = store.raw.all<{ event: string; reason: string | null; detail: string }>(
          "SELECT event, reason, detail FROM audit_events ORDER BY id",
        );
        assert.deepEqual(
          events.map((e) => `${e.event}:${e.reason ?? ""}`),
          ["armed:", "cancelled:superseded", "armed:"],
        );
        // Every row about a countdown names it first in its detail (the audit detail is built in one place).
        assert.deepEqual(
          events.map((e) => Object.keys(JSON.parse(e.detail))[0]),
          ["countdownId", "countdownId", "countdownId"],
        );
        // A countdown carries its own directory: arming alone writes no session row (one less page per arm).
        assert.equal(await port.session("ses_1"), undefined);
        await port.armCountdown(countdown("cd_3", "ses_2"), {}, { sessionPatch: { agent: "build" } });
        assert.equal((await port.session("ses_2"))?.agent, "build", "a patch given with the arming creates the row");
      });
    },
  },
  {
    name: "a live owner's countdown is respected: nothing is armed and the skip is recorded",
    async run(folder) {
      await withStore(folder, async (store, port) => {
        await port.armCountdown(countdown("cd_1", "ses_1", { owner: "other" }), {});
        const result = await port.armCountdown(countdown("cd_2"), { trigger: "idle" }, { respect: () => true });
        assert.deepEqual(result, { armed: false, heldBy: { id: "cd_1", owner: "other", leaseUntil: NOW + 15_000 } });
        assert.equal(await port.countdown("cd_2"), undefined);
        assert.equal(count(store, "audit_events WHERE event = 'skipped' AND reason = 'in_flight'"), 1);
      });
    },
  },
  {
    name: "ending a countdown happens once; a second end writes nothing, but its session change still applies",
    async run(folder) {
      await withStore(folder, async (store, port) => {
        await port.armCountdown(countdown("cd_1"), {});
        const ref = { id: "cd_1", sessionId: "ses_1", directory: "/p" };
        const cancelled = { state: "cancelled", audit: { event: "cancelled", reason: "user_message" } } as const;
        assert.equal(await port.endCountdown(ref, cancelled, NOW + 1), true);
        const expired = { state: "expired", audit: { event: "expired", reason: "stale_after_restart" } } as const;
        assert.equal(await port.endCountdown(ref, expired, NOW + 2, { recoveringSince: NOW }), false);
        assert.equal((await port.countdown("cd_1"))?.endReason, "user_message");
        assert.equal((await port.session("ses_1"))?.recoveringSince, NOW);
        assert.equal(count(store, "audit_events WHERE event = 'cancelled'"), 1);
        assert.equal(count(store, "audit_events WHERE event = 'expired'"), 0);
      });
    },
  },
  {
    name: "a stop and a person's cancel end the armed countdown through the same path",
    async run(folder) {
      await withStore(folder, async (store, port) => {
        await port.armCountdown(countdown("cd_1"), {});
        await port.changeSession({ sessionId: "ses_1", directory: "/p" }, NOW, { recheckAt: NOW + 5000 });
        assert.equal(
          (await port.cancelArmed({ sessionId: "ses_1", directory: "/p" }, NOW + 1, { via: "key" }))?.id,
          "cd_1",
        );
        // The key cancels the idle's continuation, and with it the look the session was owed.
        assert.equal((await port.session("ses_1"))?.recheckAt, null);
        assert.equal(await port.cancelArmed({ sessionId: "ses_1", directory: "/p" }, NOW + 2, {}), undefined);
        await port.armCountdown(countdown("cd_2", "ses_1", { armedAt: NOW + 3 }), {});
        const stop = await port.setStop({ sessionId: "ses_1", directory: "/p" }, "cli", NOW + 4);
        assert.deepEqual(
          { changed: stop.changed, cancelled: stop.cancelled?.id },
          { changed: true, cancelled: "cd_2" },
        );
        assert.deepEqual(await port.setStop({ sessionId: "ses_1", directory: "/p" }, "cli", NOW + 5), {
          changed: false,
        });
        const trail = store.raw.all<{ e: string }>(
          "SELECT event || ':' || coalesce(reason, '') AS e FROM audit_events WHERE event <> 'armed' ORDER BY id",
        );
        assert.deepEqual(
          trail.map((r) => r.e),
          ["cancelled:user_key", "stopped:cli", "cancelled:stopped"],
        );
        // A look that began before the key finds it; one that began after, or another session, does not; a stop is
        // not the key.
        assert.equal(await port.userCancelledSince("ses_1", NOW), NOW + 1);
        assert.equal(await port.userCancelledSince("ses_1", NOW + 1), NOW + 1);
        assert.equal(await port.userCancelledSince("ses_1", NOW + 2), undefined);
        assert.equal(await port.userCancelledSince("ses_2", NOW), undefined);
      });
    },
  },
  {
    name: "only the owner can claim a countdown for injection, once, and the pending row goes with the claim",
    async run(folder) {
      await withStore(folder, async (store, port) => {
        await port.armCountdown(countdown("cd_1"), {});
        assert.equal(await port.claimCountdown(injection("inj_a", "cd_1", { owner: "someone_else" }), {}), false);
        assert.equal(count(store, "injections"), 0);
        assert.equal(await port.claimCountdown(injection("inj_b", "cd_1"), {}), true);
        assert.equal(await port.claimCountdown(injection("inj_c", "cd_1"), {}), false);
        assert.equal((await port.countdown("cd_1"))?.state, "fired");
        assert.equal((await port.injection("inj_b"))?.status, "pending");
        assert.equal(await port.hasPendingInjection("ses_1"), true);
        assert.throws(() =>
          store.raw.run(
            "INSERT INTO injections (id, session_id, countdown_id, directory, created_at, status, todos_total, todos_open, updated_at) VALUES ('inj_d', 'ses_1', 'cd_1', '/p', 1, 'pending', 1, 1, 1)",
          ),
        );
      });
    },
  },
  {
    name: "a continuation fired since an idle answers it: a look at that idle arms nothing, and says which one did",
    async run(folder) {
      await withStore(folder, async (store, port) => {
        await port.armCountdown(countdown("cd_1"), {});
        await port.claimCountdown(injection("inj_a", "cd_1"), {}); // fired at NOW + 2000, pending
        const firedAt = NOW + 2000;
        assert.deepEqual(await port.continuedSince("ses_1", NOW), { injectionId: "inj_a", firedAt });
        assert.deepEqual(await port.continuedSince("ses_1", firedAt), { injectionId: "inj_a", firedAt });
        assert.equal(await port.continuedSince("ses_1", firedAt + 1), undefined, "a look begun after it");
        assert.equal(await port.continuedSince("ses_2", NOW), undefined);
        // Refused continuations answer nothing; sent and uncertain ones do.
        await port.settleInjection(injection("inj_a", "cd_1"), "failed", NOW + 2100, "refused", () => ({ audit: [] }));
        assert.equal(await port.continuedSince("ses_1", NOW), undefined);
        await port.armCountdown(countdown("cd_2", "ses_1", { armedAt: NOW + 2200 }), {});
        await port.claimCountdown(injection("inj_b", "cd_2", { createdAt: NOW + 2500 }), {});
        await port.settleInjection(injection("inj_b", "cd_2"), "unknown", NOW + 2600, "timeout", () => ({ audit: [] }));
        assert.deepEqual(await port.continuedSince("ses_1", NOW), { injectionId: "inj_b", firedAt: NOW + 2500 });

        // Arming for an idle seen before it: nothing armed, the skip recorded with the continuation that answered.
        const late = countdown("cd_3", "ses_1", { armedAt: NOW + 3000 });
        const result = await port.armCountdown(late, { trigger: "idle" }, { answeredSince: NOW + 1000 });
        assert.deepEqual(result, { armed: false, answeredBy: { injectionId: "inj_b", firedAt: NOW + 2500 } });
        assert.equal(await port.countdown("cd_3"), undefined);
        const skip = store.raw.all<{ reason: string; detail: string }>(
          "SELECT reason, detail FROM audit_events WHERE event = 'skipped'",
        );
        assert.deepEqual(
          skip.map((r) => [r.reason, JSON.parse(r.detail)]),
          [["in_flight", { stage: "idle", answeredBy: "inj_b", firedAt: NOW + 2500, trigger: "idle" }]],
        );
        // An idle seen after it is a new one, and arms.
        const next = countdown("cd_4", "ses_1", { armedAt: NOW + 3000 });
        assert.equal((await port.armCountdown(next, {}, { answeredSince: NOW + 2501 })).armed, true);
      });
    },
  },
  {
    name: "an injection leaves `pending` once, with the session change computed from the row in its transaction",
    async run(folder) {
      await withStore(folder, async (store, port) => {
        await port.armCountdown(countdown("cd_1"), {});
        await port.claimCountdown(injection("inj_b", "cd_1"), {});
        const sent = await port.settleInjection(injection("inj_b", "cd_1"), "sent", NOW + 3000, null, (row) => ({
          patch: { continuations: row.continuations + 1 },
          audit: [{ event: "injected" }],
        }));
        assert.ok(sent);
        const late = await port.settleInjection(injection("inj_b", "cd_1"), "failed", NOW + 4000, "late", () => ({
          audit: [{ event: "injection_failed", reason: "gave_up" }],
        }));
        assert.equal(late, undefined);
        assert.equal((await port.injection("inj_b"))?.status, "sent");
        assert.equal((await port.session("ses_1"))?.continuations, 1);
        assert.equal(count(store, "audit_events WHERE event = 'injection_failed'"), 0);
      });
    },
  },
  {
    name: "adoption takes over only while the owner is still the one read; renew and release",
    async run(folder) {
      await withStore(folder, async (store, port) => {
        await port.armCountdown(countdown("cd_1", "ses_1", { owner: "a", leaseUntil: NOW + 1000 }), {});
        const row = (await port.countdown("cd_1"))!;
        const resumed = { event: "resumed", reason: "lease_expired" } as const;
        const stale = { ...row, owner: "someone" };
        assert.deepEqual(await port.adoptCountdowns([{ countdown: stale, audit: resumed }], "b", NOW + 5000, NOW), [
          false,
        ]);
        assert.deepEqual(await port.adoptCountdowns([{ countdown: row, audit: resumed }], "b", NOW + 5000, NOW), [
          true,
        ]);
        // A second adopter that read the old owner loses.
        assert.deepEqual(await port.adoptCountdowns([{ countdown: row, audit: resumed }], "c", NOW + 5000, NOW), [
          false,
        ]);
        assert.equal((await port.countdown("cd_1"))?.owner, "b");
        assert.equal(count(store, "audit_events WHERE event = 'resumed'"), 1);
        assert.equal(await port.renewLeases("b", NOW + 20_000), 1);
        assert.equal((await port.countdown("cd_1"))?.leaseUntil, NOW + 20_000);
        assert.equal(await port.releaseLeases("b", { directory: "/other" }), 0);
        assert.equal(await port.releaseLeases("b", { directory: "/p", server: "pod-a" }), 0);
        assert.equal(await port.releaseLeases("b", { directory: "/p" }), 1);
        const released = (await port.countdown("cd_1"))!;
        assert.equal(released.owner, null);
        const expire = { state: "expired", audit: { event: "expired", reason: "stale_after_restart" } } as const;
        assert.deepEqual(await port.adoptCountdowns([{ countdown: released, end: expire }], "c", NOW + 1, NOW), [true]);
        assert.equal((await port.countdown("cd_1"))?.state, "expired");
      });
    },
  },
  {
    name: "session changes are durable and audited in the same transaction",
    async run(folder) {
      await withStore(folder, async (_store, port) => {
        await port.changeSession({ sessionId: "ses_9", directory: "/p" }, NOW, { stoppedAt: NOW, stopSource: "cli" }, [
          { event: "stopped", reason: "cli" },
        ]);
      });
      await withStore(folder, async (store, port) => {
        assert.equal((await port.session("ses_9"))?.stoppedAt, NOW);
        const row = store.raw.all<{ event: string; detail: string }>(
          "SELECT event, detail FROM audit_events WHERE session_id = 'ses_9'",
        )[0]!;
        assert.equal(row.event, "stopped");
        assert.deepEqual(JSON.parse(row.detail), {});
      });
    },
  },
  {
    name: "a failing state change rejects (never a silent false) and writes nothing",
    async run(folder) {
      await withStore(folder, async (store, port) => {
        store.raw.exec("PRAGMA query_only = ON");
        await assert.rejects(port.setStop({ sessionId: "ses_1", directory: "/p" }, "api", NOW), /readonly|read-only/i);
        store.raw.exec("PRAGMA query_only = OFF");
        assert.equal(port.problemOf(new Error("attempt to write a readonly database")), "read-only");
        assert.equal(await port.session("ses_1"), undefined);
      });
    },
  },
  {
    name: "a file that is not a database gives a clear error",
    async run(folder) {
      const path = join(folder, "garbage.db");
      writeFileSync(path, "this is not a database, just some bytes".repeat(200));
      await assert.rejects(openStore(path), (error: unknown) => {
        assert.ok(error instanceof StoreOpenError);
        assert.match((error as Error).message, /garbage\.db.*not a valid SQLite database/);
        return true;
      });
    },
  },
  {
    name: "read-only opening of a missing file fails clearly and creates nothing",
    async run(folder) {
      const path = join(folder, "missing", "state.db");
      await assert.rejects(openStore(path, { readonly: true }), /does not exist/);
      assert.equal(existsSync(join(folder, "missing")), false);
    },
  },
];

export function caseFolder(): string {
  return mkdtempSync(join(tmpdir(), "tc-store-"));
}
