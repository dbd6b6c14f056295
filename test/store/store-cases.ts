// The storage behaviour, written once and run under both runtimes: vitest runs these under Node with
// better-sqlite3, and bun-runner.ts runs them under OpenCode's Bun with bun:sqlite.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore, StoreOpenError, type Store } from "../../src/store/open.js";
import { Repository, type NewCountdown, type NewInjection } from "../../src/store/repository.js";

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
  work: (store: Store, repo: Repository) => void | Promise<void>,
): Promise<void> {
  const store = await openStore(join(folder, "nested", "dir", "state.db"));
  try {
    await work(store, new Repository(store));
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
      await withStore(folder, (store, repo) => {
        repo.armCountdown(countdown("cd_1"));
        const { superseded } = repo.armCountdown(countdown("cd_2", "ses_1", { armedAt: NOW + 100 }));
        assert.equal(superseded?.id, "cd_1");
        assert.equal(repo.getCountdown("cd_1")?.state, "cancelled");
        assert.equal(repo.getCountdown("cd_1")?.endReason, "superseded");
        assert.equal(repo.armedCountdownFor("ses_1")?.id, "cd_2");
        assert.throws(() =>
          store.raw.run(
            "INSERT INTO countdowns (id, session_id, directory, armed_at, deadline_at, state) VALUES ('cd_x', 'ses_1', '/p', 1, 2, 'armed')",
          ),
        );
        assert.throws(() => store.raw.run("UPDATE countdowns SET state = 'bogus' WHERE id = 'cd_2'"));
        const events = store.raw.all<{ event: string; reason: string | null }>(
          "SELECT event, reason FROM audit_events ORDER BY id",
        );
        assert.deepEqual(
          events.map((e) => `${e.event}:${e.reason ?? ""}`),
          ["armed:", "cancelled:superseded", "armed:"],
        );
        // A countdown carries its own directory: arming alone writes no session row (one less page per arm).
        assert.equal(repo.getSession("ses_1"), undefined);
        repo.armCountdown(countdown("cd_3", "ses_2"), {}, { agent: "build" });
        assert.equal(repo.getSession("ses_2")?.agent, "build", "a patch given with the arming creates the row");
      });
    },
  },
  {
    name: "ending a countdown happens once; a second end writes nothing",
    async run(folder) {
      await withStore(folder, (store, repo) => {
        repo.armCountdown(countdown("cd_1"));
        assert.equal(
          repo.endCountdown({ id: "cd_1", sessionId: "ses_1", directory: "/p" }, "cancelled", "user_message", NOW + 1, {
            event: "cancelled",
            reason: "user_message",
          }),
          true,
        );
        assert.equal(
          repo.endCountdown(
            { id: "cd_1", sessionId: "ses_1", directory: "/p" },
            "expired",
            "stale_after_restart",
            NOW + 2,
            { event: "expired", reason: "stale_after_restart" },
          ),
          false,
        );
        assert.equal(repo.getCountdown("cd_1")?.endReason, "user_message");
        assert.equal(count(store, "audit_events WHERE event = 'cancelled'"), 1);
        assert.equal(count(store, "audit_events WHERE event = 'expired'"), 0);
      });
    },
  },
  {
    name: "only the owner can claim a countdown for injection, once, and the pending row goes with the claim",
    async run(folder) {
      await withStore(folder, (store, repo) => {
        repo.armCountdown(countdown("cd_1"));
        assert.equal(repo.claimForInjection(injection("inj_a", "cd_1", { owner: "someone_else" })), false);
        assert.equal(count(store, "injections"), 0);
        assert.equal(repo.claimForInjection(injection("inj_b", "cd_1")), true);
        assert.equal(repo.claimForInjection(injection("inj_c", "cd_1")), false);
        assert.equal(repo.getCountdown("cd_1")?.state, "fired");
        assert.equal(repo.getInjection("inj_b")?.status, "pending");
        assert.equal(repo.hasPendingInjection("ses_1"), true);
        assert.throws(() =>
          store.raw.run(
            "INSERT INTO injections (id, session_id, countdown_id, directory, created_at, status, todos_total, todos_open, updated_at) VALUES ('inj_d', 'ses_1', 'cd_1', '/p', 1, 'pending', 1, 1, 1)",
          ),
        );
      });
    },
  },
  {
    name: "an injection leaves `pending` once, with its session patch and audit",
    async run(folder) {
      await withStore(folder, (store, repo) => {
        repo.armCountdown(countdown("cd_1"));
        repo.claimForInjection(injection("inj_b", "cd_1"));
        const sent = repo.finishInjection(
          injection("inj_b", "cd_1"),
          "sent",
          NOW + 3000,
          null,
          [{ event: "injected" }],
          (row) => ({ continuations: row.continuations + 1 }),
        );
        assert.equal(sent, true);
        assert.equal(
          repo.finishInjection(injection("inj_b", "cd_1"), "failed", NOW + 4000, "late", [
            { event: "injection_failed", reason: "gave_up" },
          ]),
          false,
        );
        assert.equal(repo.getInjection("inj_b")?.status, "sent");
        assert.equal(repo.getSession("ses_1")?.continuations, 1);
        assert.equal(count(store, "audit_events WHERE event = 'injection_failed'"), 0);
      });
    },
  },
  {
    name: "leases: a take-over succeeds only while the owner is still the one the adopter saw; renew and release",
    async run(folder) {
      await withStore(folder, (_store, repo) => {
        repo.armCountdown(countdown("cd_1", "ses_1", { owner: "a", leaseUntil: NOW + 1000 }));
        assert.equal(repo.takeOver("cd_1", "someone", "b", NOW + 5000), false);
        assert.equal(repo.takeOver("cd_1", "a", "b", NOW + 5000), true);
        // A second adopter that saw the old owner loses.
        assert.equal(repo.takeOver("cd_1", "a", "c", NOW + 5000), false);
        assert.equal(repo.getCountdown("cd_1")?.owner, "b");
        assert.equal(repo.renewLeases("b", NOW + 20_000), 1);
        assert.equal(repo.getCountdown("cd_1")?.leaseUntil, NOW + 20_000);
        assert.equal(repo.releaseLeases("b"), 1);
        assert.equal(repo.getCountdown("cd_1")?.owner, null);
        assert.equal(repo.takeOver("cd_1", null, "c", NOW + 1), true);
        repo.claimForInjection(injection("inj_x", "cd_1", { owner: "c" }));
        assert.equal(repo.takeOver("cd_1", "c", "d", NOW + 1), false, "a fired countdown cannot be adopted");
      });
    },
  },
  {
    name: "session patches are durable and audited in the same transaction",
    async run(folder) {
      await withStore(folder, (_store, repo) => {
        repo.updateSession({ sessionId: "ses_9", directory: "/p" }, { stoppedAt: NOW, stopSource: "cli" }, NOW, [
          { event: "stopped", reason: "cli" },
        ]);
      });
      await withStore(folder, (store, repo) => {
        assert.equal(repo.getSession("ses_9")?.stoppedAt, NOW);
        const row = store.raw.all<{ event: string; detail: string }>(
          "SELECT event, detail FROM audit_events WHERE session_id = 'ses_9'",
        )[0]!;
        assert.equal(row.event, "stopped");
        assert.deepEqual(JSON.parse(row.detail), {});
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
