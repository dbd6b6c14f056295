// What only a SQLite file has (its permissions, PRAGMAs, migration at open, the constraints of the schema, a file that
// is not a database), written once and run under both runtimes: vitest runs these under Node with better-sqlite3, and
// bun-runner.ts runs them under OpenCode's Bun with bun:sqlite. What every backend promises is in contract-cases.ts.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { arm } from "../../src/store/changes/arm.js";
import { stop } from "../../src/store/changes/stop.js";
import { q } from "../../src/store/script.js";
import { openSqlite, StoreOpenError, type SqliteConnection } from "../../src/store/sqlite/open.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { newRows } from "../support/new-rows.js";

export interface StoreCase {
  name: string;
  run(folder: string): Promise<void>;
}

const NOW = 1_800_000_000_000;

const { countdown } = newRows(NOW, "me");

async function withStore(
  folder: string,
  work: (store: SqliteConnection, port: SqliteStore) => void | Promise<void>,
): Promise<void> {
  const store = await openSqlite(join(folder, "nested", "dir", "state.db"));
  try {
    await work(store, new SqliteStore(store));
  } finally {
    store.close();
  }
}

const count = (store: SqliteConnection, sql: string, ...params: unknown[]) =>
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
    name: "makes an existing file owner-only, and never gives its owner more than they had",
    async run(folder) {
      const path = join(folder, "nested", "dir", "state.db");
      await withStore(folder, () => undefined);
      chmodSync(path, 0o644);
      await withStore(folder, (store) => assert.equal(statSync(store.path).mode & 0o777, 0o600));
      // Read-only for its owner: opened (root may write it), or refused as read-only, but never made writable.
      chmodSync(path, 0o444);
      await withStore(folder, () => undefined).catch((error: Error) => assert.match(error.message, /read-only/));
      assert.equal(statSync(path).mode & 0o777, 0o400);
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
    name: "the schema allows one armed countdown per session, one injection per countdown, and known states only",
    async run(folder) {
      await withStore(folder, async (store, port) => {
        await port.change(arm(countdown("cd_1"), {}));
        assert.throws(() =>
          store.raw.run(
            "INSERT INTO countdowns (id, session_id, directory, armed_at, deadline_at, state) VALUES ('cd_x', 'ses_1', '/p', 1, 2, 'armed')",
          ),
        );
        assert.throws(() => store.raw.run("UPDATE countdowns SET state = 'bogus' WHERE id = 'cd_1'"));
        const insertInjection = (id: string) =>
          store.raw.run(
            `INSERT INTO injections (id, session_id, countdown_id, directory, created_at, status, todos_total, todos_open, updated_at) VALUES ('${id}', 'ses_1', 'cd_1', '/p', 1, 'pending', 1, 1, 1)`,
          );
        insertInjection("inj_1");
        assert.throws(() => insertInjection("inj_2"));
      });
    },
  },
  {
    name: "a state change is durable once it answers, and a failing one rejects (never a silent false) and writes nothing",
    async run(folder) {
      await withStore(folder, async (store, port) => {
        store.raw.exec("PRAGMA query_only = ON");
        await assert.rejects(
          port.change(stop({ sessionId: "ses_1", directory: "/p" }, "api", NOW)),
          /readonly|read-only/i,
        );
        store.raw.exec("PRAGMA query_only = OFF");
        assert.equal(port.problemOf(new Error("attempt to write a readonly database")), "read-only");
        assert.equal(await port.read(q.session("ses_1")), undefined);
        await port.change(stop({ sessionId: "ses_9", directory: "/p" }, "cli", NOW));
      });
      await withStore(folder, async (store, port) => {
        assert.equal((await port.read(q.session("ses_9")))?.stoppedAt, NOW);
        const rows = store.raw.all<{ event: string; detail: string }>(
          "SELECT event, detail FROM audit_events WHERE session_id = 'ses_9'",
        );
        assert.deepEqual(
          rows.map((r) => [r.event, JSON.parse(r.detail) as unknown]),
          [["stopped", {}]],
        );
      });
    },
  },
  {
    name: "a file that is not a database gives a clear error",
    async run(folder) {
      const path = join(folder, "garbage.db");
      writeFileSync(path, "this is not a database, just some bytes".repeat(200));
      await assert.rejects(openSqlite(path), (error: unknown) => {
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
      await assert.rejects(openSqlite(path, { readonly: true }), /does not exist/);
      assert.equal(existsSync(join(folder, "missing")), false);
    },
  },
];

export function caseFolder(): string {
  return mkdtempSync(join(tmpdir(), "tc-store-"));
}
