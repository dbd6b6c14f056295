// What only PostgreSQL has to promise: the claim fenced by heartbeats on the database's clock, liveness across hosts,
// a server that is read-only, hangs, ends connections or queues a burst, and migrations applied once by racing
// processes (Bun's pool never mixing transactions: pg-isolation.bun.test.ts). What every backend promises is in contract-cases.ts.
import { createServer, type AddressInfo } from "node:net";
import { sql } from "drizzle-orm";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { arm } from "../../src/store/changes/arm.js";
import { changeSession } from "../../src/store/changes/change-session.js";
import { oweLook } from "../../src/store/changes/look-owed.js";
import { claim } from "../../src/store/changes/claim.js";
import { openStore } from "../../src/store/open/open.js";
import { StoreOpenError } from "../../src/store/open/open-error.js";
import { openPg } from "../../src/store/pg/open.js";
import { PgStore } from "../../src/store/pg/pg-store.js";
import { SESSION_LOCK_SPACE } from "../../src/store/pg/pools.js";
import { pgProblemOf } from "../../src/store/pg/problems.js";
import { IncompleteAnswerError, whole } from "../../src/store/pg/rows.js";
import { q } from "../../src/store/script.js";
import { newRows } from "../support/new-rows.js";
import { freshDatabase, pgQuery, sharedServerUrl } from "../support/pg-database.js";

const NOW = Date.now();
const ME = "host-a/1/aaaa";
const OTHER = "host-b/2/bbbb";
const { countdown, injection } = newRows(NOW, ME);

describe("PostgreSQL only", () => {
  it("fences the claim: an owner whose heartbeat the database no longer counts cannot fire", async () => {
    const url = await freshDatabase("fence");
    const store = await openStore(url);
    try {
      await store.heartbeat(ME, 15_000);
      await store.change(arm(countdown("cd1"), {}));
      // The heartbeat ages past its lease by the database's clock (as if the process had been stopped for a while).
      await pgQuery(url, "UPDATE replicas SET heartbeat_at = heartbeat_at - 60000 WHERE id = $1", [ME]);
      expect(await store.change(claim(injection("i1", "cd1"), {}))).toBe(false);
      expect((await store.read(q.countdown("cd1")))?.state).toBe("armed");
      await store.heartbeat(ME, 15_000);
      expect(await store.change(claim(injection("i1", "cd1"), {}))).toBe(true);
    } finally {
      await store.close();
    }
  });

  it("judges liveness by heartbeats on the database's clock, not by pids or host clocks", async () => {
    const url = await freshDatabase("live");
    const a = await openStore(url);
    const b = await openStore(url);
    try {
      await b.heartbeat(OTHER, 15_000);
      await a.heartbeat(ME, 15_000);
      // A lease far in the past by this host's clock does not make a fresh heartbeat dead, nor the reverse.
      expect(a.ownerAlive(OTHER, 0, Date.now())).toBe(true);
      await pgQuery(url, "UPDATE replicas SET heartbeat_at = heartbeat_at - 20000 WHERE id = $1", [OTHER]);
      await a.heartbeat(ME, 15_000);
      expect(a.ownerAlive(OTHER, Date.now() + 60_000, Date.now())).toBe(false);
      await b.retire(OTHER);
      expect(await pgQuery(url, "SELECT id FROM replicas")).toEqual([{ id: ME }]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("a read-only server and a statement that hangs are store problems (the engine pauses), not crashes", async () => {
    const url = await freshDatabase("faults");
    const name = url.slice(url.lastIndexOf("/") + 1);
    await (await openStore(url)).close();
    await pgQuery(url, `ALTER DATABASE ${name} SET default_transaction_read_only = on`);
    // Settings apply to new connections: a store opened now sees a read-only server.
    const readOnly = await openStore(url, { lazy: true });
    try {
      const refused = await readOnly.probe().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(readOnly.problemOf(refused)).toBe("read-only");
      await expect(readOnly.heartbeat(ME, 15_000)).rejects.toThrow();
    } finally {
      await readOnly.close();
    }
    // Lifted from another database: in the read-only one even ALTER DATABASE is refused.
    await pgQuery(sharedServerUrl(), `ALTER DATABASE ${name} SET default_transaction_read_only = off`);
    // A session lock held elsewhere for longer than the lock timeout (2 s here): the wait ends with a "locked" problem
    // (the client, left to wait longer than its default 1.5 s, hears the server's answer).
    const store = new PgStore(
      await openPg(url, { statementTimeoutMs: 1000, idleInTransactionMs: 1000, clientTimeoutMs: 5000 }),
    );
    const holder = new (await import("pg")).default.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [0x7463, "ses_held"]);
      const waited = await store
        .change(changeSession({ sessionId: "ses_held", directory: "/p" }, NOW, { continuations: 1 }))
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(store.problemOf(waited)).toBe("locked");
      await holder.query("ROLLBACK");
      await store.probe();
    } finally {
      await holder.end();
      await store.close();
    }
  });

  it("a connection the server ends in the middle of a transaction fails that transaction, not the process", async () => {
    const url = await freshDatabase("cut");
    const store = new PgStore(await openPg(url));
    try {
      const cut = store.connection.transaction(async (tx) => {
        const result = (await tx.execute(sql`SELECT pg_backend_pid() AS pid`)) as unknown as {
          rows: Array<{ pid: number }>;
        };
        const { pid } = result.rows[0]!;
        // Ended while idle in the transaction (as idle_in_transaction_session_timeout does to a frozen process): the
        // driver hears of it with no query running, which would be an uncaught 'error' event.
        const client = (tx as unknown as { $client: { once(event: "end", listener: () => void): void } }).$client;
        const ended = new Promise<void>((resolve) => client.once("end", resolve));
        await pgQuery(url, "SELECT pg_terminate_backend($1)", [pid]);
        await ended;
        await tx.execute(sql`SELECT 1`);
      });
      const failed = await cut.then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(store.problemOf(failed)).toBe("unavailable");
      // The pool goes on with a fresh connection.
      await store.probe();
    } finally {
      await store.close();
    }
  });

  it("a server that accepts connections but never answers is unavailable within the connect timeout", async () => {
    // A black hole: the TCP handshake succeeds, the server's greeting never comes (a hung host, a stuck proxy).
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as AddressInfo).port;
    const started = Date.now();
    try {
      const failure = await openPg(`postgres://postgres@127.0.0.1:${port}/nothing`, { connectTimeoutMs: 500 }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(StoreOpenError);
      expect(pgProblemOf((failure as StoreOpenError).cause)).toBe("unavailable");
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      silent.close();
    }
  });

  it(
    "a burst of state changes waits for a free connection however long it takes: queueing is not an outage",
    {
      timeout: 60_000,
    },
    async () => {
      const url = await freshDatabase("burst");
      // Two connections, both taken by state changes of a session whose lock another transaction holds for 16 s: the
      // rest of the burst waits longer for a connection than any connect may take (here 0.5 s), and must not fail for it.
      const connection = await openPg(url, { poolSize: 2, connectTimeoutMs: 500, statementTimeoutMs: 20_000 });
      const store = new PgStore(connection);
      const holder = new (await import("pg")).default.Client({ connectionString: url });
      await holder.connect();
      try {
        await holder.query("BEGIN");
        await holder.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [0x7463, "ses_burst"]);
        const burst = Array.from({ length: 6 }, (_, i) =>
          store.change(
            changeSession({ sessionId: i < 2 ? "ses_burst" : `ses_other_${i}`, directory: "/p" }, NOW, {
              continuations: i,
            }),
          ),
        );
        setTimeout(() => void holder.query("ROLLBACK"), 16_000);
        const settled = await Promise.allSettled(burst);
        expect(settled.map((s) => s.status)).toEqual(Array(6).fill("fulfilled"));
      } finally {
        await holder.end();
        await store.close();
      }
    },
  );

  it(
    "connections the server ends under load are never lost from the pool: every call settles, the store goes on",
    {
      timeout: 60_000,
    },
    async () => {
      const url = await freshDatabase("kills");
      const POOL_SIZE = 4;
      const store = new PgStore(await openPg(url, { poolSize: POOL_SIZE }));
      const admin = new (await import("pg")).default.Client({ connectionString: url });
      await admin.connect();
      const until = Date.now() + 3000;
      let done = 0;
      let failed = 0;
      const worker = async (w: number) => {
        for (let i = 0; Date.now() < until; i++) {
          const scope = { sessionId: `ses_${(w * 7 + i) % 13}`, directory: "/p" };
          const call =
            i % 2
              ? store.read(q.session(scope.sessionId))
              : store.change(changeSession(scope, NOW, { continuations: i }));
          await call.then(
            () => done++,
            (error: unknown) => {
              expect(store.problemOf(error)).toBe("unavailable");
              failed++;
            },
          );
        }
      };
      let lastKilled: number[] = [];
      const killer = async () => {
        while (Date.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          // pg_terminate_backend in the select list: in WHERE it could run before the filter, on the admin too.
          const killed = await admin.query<{ pid: number }>(
            "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'todo-continuation'",
          );
          lastKilled = killed.rows.map((row) => row.pid);
        }
      };
      try {
        // A connection lost from the pool for good would leave calls waiting for ever: all must settle.
        const settled = Promise.all([killer(), ...Array.from({ length: 12 }, (_, w) => worker(w))]);
        const verdict = await Promise.race([
          settled.then(() => "settled"),
          new Promise((resolve) => setTimeout(() => resolve("hung"), 30_000)),
        ]);
        expect(verdict).toBe("settled");
        expect(failed).toBeGreaterThan(0);
        expect(done).toBeGreaterThan(0);
        // pg_terminate_backend only signals: a backend of the last round may still be ending (late on a busy machine).
        await expect
          .poll(
            async () =>
              (await admin.query("SELECT pid FROM pg_stat_activity WHERE pid = ANY($1)", [lastKilled])).rowCount,
            { timeout: 20_000, interval: 50 },
          )
          .toBe(0);
        // Each pooled connection the last round ended may fail one more call (and is then replaced), as the engine's
        // probe would find; after as many, the pool has only live ones.
        const probes: string[] = [];
        for (let i = 0; i <= POOL_SIZE && probes.at(-1) !== "ok"; i++)
          probes.push(
            await store.probe().then(
              () => "ok",
              (error: unknown) => String(store.problemOf(error)),
            ),
          );
        expect(probes.at(-1)).toBe("ok");
        expect(probes.slice(0, -1).every((p) => p === "unavailable")).toBe(true);
        const after = await store.change(changeSession({ sessionId: "ses_after", directory: "/p" }, NOW, {}));
        expect(after.sessionId).toBe("ses_after");
      } finally {
        await admin.end();
        await store.close();
      }
    },
  );

  it("a change PostgreSQL aborts to break a deadlock with another transaction is run again, and lands", async () => {
    const url = await freshDatabase("deadlock");
    const store = await openStore(url);
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      const scope = { sessionId: "ses_deadlock", directory: "/work", server: null };
      await store.change(oweLook(scope, NOW, { owe: NOW }));
      // Another transaction holds the session's row; it waits long before it looks for a deadlock, so that the
      // change's transaction is the one PostgreSQL aborts to break it.
      await other.query("BEGIN");
      await other.query("SET LOCAL deadlock_timeout = '60s'");
      await other.query("SELECT 1 FROM sessions WHERE session_id = 'ses_deadlock' FOR UPDATE");
      // The change takes the session's lock, then waits for the row.
      const changing = store.change(oweLook(scope, NOW + 1, { owe: NOW + 1 }));
      const waiting = async () =>
        (
          await pgQuery<{ n: string }>(
            url,
            "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
          )
        )[0]!.n !== "0";
      for (let tries = 0; !(await waiting()); tries++) {
        if (tries > 200) throw new Error("the change never waited for the row");
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      // Now the other transaction asks for the session's lock: a deadlock. Granted once the change is aborted.
      await other.query(`SELECT pg_advisory_xact_lock(${SESSION_LOCK_SPACE}, hashtext('ses_deadlock'))`);
      await other.query("COMMIT");
      expect(await changing).toMatchObject({ recheckAt: NOW + 1 });
      const [row] = await pgQuery<{ recheck_at: string }>(
        url,
        "SELECT recheck_at FROM sessions WHERE session_id = 'ses_deadlock'",
      );
      expect(Number(row!.recheck_at)).toBe(NOW + 1);
    } finally {
      await other.end();
      await store.close();
    }
  });

  it("applies migrations once when eight processes open a fresh database at once", async () => {
    const url = await freshDatabase("migr");
    const stores = await Promise.all(Array.from({ length: 8 }, () => openStore(url)));
    try {
      const applied = await pgQuery<{ n: string }>(url, "SELECT count(*) AS n FROM drizzle.__drizzle_migrations");
      const files = (await import("node:fs")).readdirSync("migrations-pg").filter((f) => f.endsWith(".sql"));
      expect(Number(applied[0]!.n)).toBe(files.length);
      expect(stores.every((s) => s.dialect === "postgresql")).toBe(true);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});

describe("answers PostgreSQL's clients can give when a connection ends mid-read", () => {
  it("a row missing what no row can lack is a failed read, never a row", () => {
    expect(whole([{ id: "cd_1", sessionId: "ses_1" }], ["id", "sessionId"])).toHaveLength(1);
    // What Bun's SQL client resolved queries with when the server ended their connection (seen here).
    for (const row of [{ id: "", sessionId: null }, { id: "cd_1", sessionId: "" }, { id: "cd_1" }]) {
      const failure = (() => {
        try {
          whole([row as { id: string; sessionId: string }], ["id", "sessionId"]);
          return undefined;
        } catch (error) {
          return error;
        }
      })();
      expect(failure).toBeInstanceOf(IncompleteAnswerError);
      expect(pgProblemOf(failure)).toBe("unavailable");
    }
  });
});
