// The store port's guarantees, written once and run on both backends: a SQLite file and a real PostgreSQL server.
// Only the port is used (plus a row count), so what holds here holds for the engine whichever store it is given.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import type { EngineStore, NewCountdown, NewInjection } from "../../src/store/port.js";
import { openEngineStore } from "../../src/store/open-engine-store.js";
import { openPg, PgOpenError } from "../../src/store/pg/open.js";
import { PgStore } from "../../src/store/pg/pg-store.js";
import { pgProblemOf } from "../../src/store/pg/problems.js";
import { IncompleteAnswerError, whole } from "../../src/store/pg/rows.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { freshDatabase, pgQuery, sharedServerUrl } from "../support/pg-database.js";
import { startProcess } from "../crash/processes.js";

const NOW = Date.now();
const ME = "host-a/1/aaaa";
const OTHER = "host-b/2/bbbb";

function countdown(id: string, sessionId = "ses_1", extra: Partial<NewCountdown> = {}): NewCountdown {
  return {
    id,
    sessionId,
    directory: "/p",
    armedAt: NOW,
    deadlineAt: NOW + 2000,
    owner: ME,
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
    owner: ME,
    leaseUntil: NOW + 60_000,
    ...extra,
  };
}

interface Backend {
  name: string;
  /** A new empty database; `open` gives another connection (another process's view) to the same one. */
  fresh(): Promise<{ open(): Promise<EngineStore>; count(sql: string): Promise<number> }>;
}

const folders: string[] = [];
afterAll(() => folders.forEach((f) => rmSync(f, { recursive: true, force: true })));

const BACKENDS: Backend[] = [
  {
    name: "SQLite",
    async fresh() {
      const folder = mkdtempSync(join(tmpdir(), "tc-port-"));
      folders.push(folder);
      const path = join(folder, "state.db");
      const opened: SqliteStore[] = [];
      return {
        open: async () => {
          const store = (await openEngineStore(path)) as SqliteStore;
          opened.push(store);
          return store;
        },
        count: async (sql) =>
          Number(
            await openEngineStore(path).then(async (s) => {
              const n = (s as SqliteStore).connection.raw.all<{ n: number }>(`SELECT count(*) AS n FROM ${sql}`)[0]!.n;
              await s.close();
              return n;
            }),
          ),
      };
    },
  },
  {
    name: "PostgreSQL",
    async fresh() {
      const url = await freshDatabase("port");
      return {
        open: () => openEngineStore(url),
        count: async (sql) => Number((await pgQuery<{ n: string }>(url, `SELECT count(*) AS n FROM ${sql}`))[0]!.n),
      };
    },
  },
];

describe.each(BACKENDS)("store port on $name", (backend) => {
  async function world() {
    const db = await backend.fresh();
    const a = await db.open();
    const b = await db.open();
    await a.heartbeat(ME, 15_000);
    await b.heartbeat(OTHER, 15_000);
    const close = () => Promise.all([a.close(), b.close()]);
    return { ...db, a, b, close };
  }

  it("arms one countdown per session: a new one supersedes, a live foreign owner's is respected", async () => {
    const w = await world();
    try {
      expect((await w.a.armCountdown(countdown("cd1"), {})).armed).toBe(true);
      const second = await w.a.armCountdown(countdown("cd2"), {});
      expect(second).toMatchObject({ armed: true, superseded: { id: "cd1" } });
      expect((await w.a.countdown("cd1"))?.state).toBe("cancelled");
      const held = await w.b.armCountdown(
        countdown("cd3", "ses_1", { owner: OTHER }),
        { why: "test" },
        {
          respect: () => true,
        },
      );
      expect(held).toMatchObject({ armed: false, heldBy: { id: "cd2", owner: ME } });
      expect(await w.count("audit_events WHERE event = 'skipped' AND reason = 'in_flight'")).toBe(1);
      expect(await w.count("countdowns WHERE state = 'armed'")).toBe(1);
    } finally {
      await w.close();
    }
  });

  it("lets exactly one of many processes arming the same session at once win each round", async () => {
    const w = await world();
    try {
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? w.a : w.b).armCountdown(countdown(`cd${i}`, "ses_race", { owner: i % 2 ? ME : OTHER }), {}),
        ),
      );
      expect(results.every((r) => r.armed)).toBe(true);
      expect(await w.count("countdowns WHERE state = 'armed' AND session_id = 'ses_race'")).toBe(1);
      expect(await w.count("countdowns WHERE state = 'cancelled' AND session_id = 'ses_race'")).toBe(39);
    } finally {
      await w.close();
    }
  });

  it("claims at most once: only the owner, only while armed, one winner among racing claims", async () => {
    const w = await world();
    try {
      await w.a.armCountdown(countdown("cd1"), {});
      expect(await w.b.claimCountdown(injection("i0", "cd1", { owner: OTHER }), {})).toBe(false);
      const claims = await Promise.all([
        w.a.claimCountdown(injection("i1", "cd1"), {}),
        w.a.claimCountdown(injection("i2", "cd1"), {}),
        w.a.claimCountdown(injection("i3", "cd1"), {}),
      ]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect(await w.count("injections WHERE countdown_id = 'cd1' AND status = 'pending'")).toBe(1);
      expect((await w.a.countdown("cd1"))?.state).toBe("fired");
      await w.a.armCountdown(countdown("cd2"), {});
      await w.a.cancelArmed({ sessionId: "ses_1", directory: "/p" }, NOW, { key: "escape" });
      expect(await w.a.claimCountdown(injection("i4", "cd2"), {})).toBe(false);
    } finally {
      await w.close();
    }
  });

  it("an idle answered by one process's continuation arms nothing in another that looked at it before", async () => {
    const w = await world();
    try {
      await w.a.armCountdown(countdown("cd1"), {});
      expect(await w.a.claimCountdown(injection("inj1", "cd1"), {})).toBe(true); // fired at NOW + 2000
      await w.a.settleInjection(injection("inj1", "cd1"), "sent", NOW + 2100, null, () => ({ audit: [] }));
      const answered = { injectionId: "inj1", firedAt: NOW + 2000 };
      expect(await w.b.continuedSince("ses_1", NOW + 500)).toEqual(answered);
      expect(await w.b.continuedSince("ses_1", NOW + 2001)).toBeUndefined();
      const late = countdown("cd2", "ses_1", { owner: OTHER, armedAt: NOW + 3000 });
      expect(await w.b.armCountdown(late, { trigger: "recheck" }, { answeredSince: NOW + 500 })).toEqual({
        armed: false,
        answeredBy: answered,
      });
      expect(await w.count("countdowns WHERE id = 'cd2'")).toBe(0);
      expect(
        await w.count(
          "audit_events WHERE event = 'skipped' AND reason = 'in_flight' AND detail LIKE '%\"answeredBy\":\"inj1\"%'",
        ),
      ).toBe(1);
      // A look that began after the continuation judges a new idle.
      const next = countdown("cd3", "ses_1", { owner: OTHER, armedAt: NOW + 3000 });
      expect((await w.b.armCountdown(next, {}, { answeredSince: NOW + 2001 })).armed).toBe(true);
    } finally {
      await w.close();
    }
  });

  it("adopts an orphan once when two processes race for it", async () => {
    const w = await world();
    try {
      await w.a.armCountdown(countdown("cd1", "ses_1", { owner: "gone-host/9/dead" }), {});
      const row = (await w.a.countdown("cd1"))!;
      const audit = { event: "resumed", reason: "lease_expired", detail: {} } as const;
      const [x, y] = await Promise.all([
        w.a.adoptCountdowns([{ countdown: row, audit }], ME, NOW + 15_000, NOW),
        w.b.adoptCountdowns([{ countdown: row, audit }], OTHER, NOW + 15_000, NOW),
      ]);
      expect([...x, ...y].filter(Boolean)).toHaveLength(1);
      expect(await w.count("audit_events WHERE event = 'resumed'")).toBe(1);
      const owner = (await w.a.countdown("cd1"))!.owner;
      expect([ME, OTHER]).toContain(owner);
    } finally {
      await w.close();
    }
  });

  it("keeps the stop durable and idempotent, and resumes once", async () => {
    const w = await world();
    try {
      const scope = { sessionId: "ses_1", directory: "/p" };
      await w.a.armCountdown(countdown("cd1"), {});
      expect(await w.a.setStop(scope, "command", NOW)).toMatchObject({ changed: true, cancelled: { id: "cd1" } });
      expect((await w.b.setStop(scope, "cli", NOW)).changed).toBe(false);
      expect((await w.b.session("ses_1"))?.stoppedAt).toBe(NOW);
      expect(await w.b.resume(scope, "cli", NOW + 1, { stoppedAt: null, stopSource: null })).toBe(true);
      expect(await w.a.resume(scope, "cli", NOW + 2, { stoppedAt: null, stopSource: null })).toBe(false);
      expect(await w.count("audit_events WHERE event IN ('stopped', 'unstopped')")).toBe(2);
    } finally {
      await w.close();
    }
  });

  it("settles an injection once, and confirms an uncertain one once", async () => {
    const w = await world();
    try {
      await w.a.armCountdown(countdown("cd1"), {});
      await w.a.claimCountdown(injection("i1", "cd1"), {});
      const settle = () => ({ patch: { continuations: 1 }, audit: [{ event: "injected" as const, detail: {} }] });
      const [one, two] = await Promise.all([
        w.a.settleInjection(injection("i1", "cd1"), "unknown", NOW, "lost", settle),
        w.b.settleInjection(injection("i1", "cd1"), "failed", NOW, "lost", settle),
      ]);
      expect([one, two].filter(Boolean)).toHaveLength(1);
      expect(await w.a.uncertainInjections("ses_1", NOW)).toHaveLength(1);
      const confirm = () => ({ audit: [{ event: "reconciled" as const, reason: "found" as const, detail: {} }] });
      expect(await w.b.confirmUncertain(injection("i1", "cd1"), NOW, confirm)).toBeDefined();
      expect(await w.a.confirmUncertain(injection("i1", "cd1"), NOW, confirm)).toBeUndefined();
      expect((await w.a.injection("i1"))?.status).toBe("sent");
      expect((await w.a.session("ses_1"))?.continuations).toBe(1);
    } finally {
      await w.close();
    }
  });

  it("applies a change computed from the row, serialized per session across processes", async () => {
    const w = await world();
    try {
      const scope = { sessionId: "ses_count", directory: "/p" };
      await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 ? w.a : w.b).changeSession(scope, NOW + i, (row) => ({ continuations: row.continuations + 1 })),
        ),
      );
      expect((await w.a.session("ses_count"))?.continuations).toBe(30);
    } finally {
      await w.close();
    }
  });

  it("renews and releases leases; prune keeps what is still live", async () => {
    const w = await world();
    try {
      await w.a.armCountdown(countdown("cd1", "ses_1", { armedAt: 1000, deadlineAt: 2000 }), {});
      await w.a.armCountdown(countdown("cd2", "ses_2", { armedAt: 1000, deadlineAt: 2000 }), {});
      await w.a.endCountdown(
        { id: "cd2", sessionId: "ses_2", directory: "/p" },
        { state: "expired", audit: { event: "expired", reason: "stale_after_restart", detail: {} } },
        1500,
      );
      expect(await w.a.renewLeases(ME, NOW + 30_000)).toBe(1);
      expect((await w.b.countdown("cd1"))?.leaseUntil).toBe(NOW + 30_000);
      const report = await w.a.prune(NOW);
      expect(report.countdowns).toBe(1);
      expect(await w.a.countdown("cd1")).toBeDefined();
      expect(await w.a.releaseLeases(ME, { directory: "/p" })).toBe(1);
      expect((await w.b.countdown("cd1"))?.owner).toBeNull();
    } finally {
      await w.close();
    }
  });

  it("scopes rows by directory and server: pods that share a directory path never see each other's rows", async () => {
    const w = await world();
    try {
      const scopes = [{ server: null }, { server: "pod-a" }, { server: "pod-b" }] as const;
      for (const [i, { server }] of scopes.entries()) {
        const sessionId = `ses_${i}`;
        await w.a.armCountdown(countdown(`cd${i}`, sessionId, { server }), {});
        await w.a.changeSession({ sessionId, directory: "/p", server }, NOW, { recheckAt: NOW });
      }
      await w.a.claimCountdown(injection("i1", "cd1", { sessionId: "ses_1", server: "pod-a" }), {});
      for (const [i, { server }] of scopes.entries()) {
        const scope = { directory: "/p", server };
        expect((await w.b.armedCountdowns(scope)).map((c) => [c.id, c.server])).toEqual(
          i === 1 ? [] : [[`cd${i}`, server]],
        );
        expect((await w.b.pendingInjections(scope)).map((r) => r.id)).toEqual(i === 1 ? ["i1"] : []);
        expect((await w.b.sessionsToRecheck(scope, NOW)).map((r) => r.sessionId)).toEqual([`ses_${i}`]);
        expect((await w.b.session(`ses_${i}`))?.server).toBe(server);
      }
      // An absent server is the machine's own (NULL), not "any".
      expect((await w.b.armedCountdowns({ directory: "/p" })).map((c) => c.id)).toEqual(["cd0"]);
      expect(await w.count("audit_events WHERE server = 'pod-a' AND event IN ('armed', 'fired')")).toBe(2);
      expect(await w.count("audit_events WHERE server IS NULL AND event = 'armed'")).toBe(1);
      expect(await w.a.releaseLeases(ME, { directory: "/p", server: "pod-b" })).toBe(1);
      expect((await w.b.countdown("cd2"))?.owner).toBeNull();
      expect((await w.b.countdown("cd0"))?.owner).toBe(ME);
    } finally {
      await w.close();
    }
  });
});

describe("PostgreSQL only", () => {
  it("fences the claim: an owner whose heartbeat the database no longer counts cannot fire", async () => {
    const url = await freshDatabase("fence");
    const store = await openEngineStore(url);
    try {
      await store.heartbeat(ME, 15_000);
      await store.armCountdown(countdown("cd1"), {});
      // The heartbeat ages past its lease by the database's clock (as if the process had been stopped for a while).
      await pgQuery(url, "UPDATE replicas SET heartbeat_at = heartbeat_at - 60000 WHERE id = $1", [ME]);
      expect(await store.claimCountdown(injection("i1", "cd1"), {})).toBe(false);
      expect((await store.countdown("cd1"))?.state).toBe("armed");
      await store.heartbeat(ME, 15_000);
      expect(await store.claimCountdown(injection("i1", "cd1"), {})).toBe(true);
    } finally {
      await store.close();
    }
  });

  it("judges liveness by heartbeats on the database's clock, not by pids or host clocks", async () => {
    const url = await freshDatabase("live");
    const a = (await openEngineStore(url)) as PgStore;
    const b = (await openEngineStore(url)) as PgStore;
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
    await (await openEngineStore(url)).close();
    await pgQuery(url, `ALTER DATABASE ${name} SET default_transaction_read_only = on`);
    // Settings apply to new connections: a store opened now sees a read-only server.
    const readOnly = await openEngineStore(url, { lazy: true });
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
    // A session lock held elsewhere for longer than the lock timeout (2 s here): the wait ends with a "locked" problem.
    const store = new PgStore(await openPg(url, { statementTimeoutMs: 1000, idleInTransactionMs: 1000 }));
    const holder = new (await import("pg")).default.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [0x7463, "ses_held"]);
      const waited = await store
        .changeSession({ sessionId: "ses_held", directory: "/p" }, NOW, { continuations: 1 })
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
    const store = (await openEngineStore(url)) as PgStore;
    try {
      const cut = store.connection.transaction(async (tx) => {
        const result = (await tx.execute(sql`SELECT pg_backend_pid() AS pid`)) as unknown as {
          rows: Array<{ pid: number }>;
        };
        const { pid } = result.rows[0]!;
        // Ended while idle in the transaction (as idle_in_transaction_session_timeout does to a frozen process): the
        // driver hears of it with no query running, which would be an uncaught 'error' event.
        await pgQuery(url, "SELECT pg_terminate_backend($1)", [pid]);
        await new Promise((resolve) => setTimeout(resolve, 300));
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
      expect(failure).toBeInstanceOf(PgOpenError);
      expect(pgProblemOf((failure as PgOpenError).cause)).toBe("unavailable");
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
          store.changeSession({ sessionId: i < 2 ? "ses_burst" : `ses_other_${i}`, directory: "/p" }, NOW, {
            continuations: i,
          }),
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
      const store = new PgStore(await openPg(url, { poolSize: 4 }));
      const admin = new (await import("pg")).default.Client({ connectionString: url });
      await admin.connect();
      const until = Date.now() + 3000;
      let done = 0;
      let failed = 0;
      const worker = async (w: number) => {
        for (let i = 0; Date.now() < until; i++) {
          const scope = { sessionId: `ses_${(w * 7 + i) % 13}`, directory: "/p" };
          await (i % 2 ? store.session(scope.sessionId) : store.changeSession(scope, NOW, { continuations: i })).then(
            () => done++,
            (error: unknown) => {
              expect(store.problemOf(error)).toBe("unavailable");
              failed++;
            },
          );
        }
      };
      const killer = async () => {
        while (Date.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          await admin.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'todo-continuation'",
          );
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
        // A pooled connection ended by the last kill may fail one more call, as the engine's probe would find.
        await store.probe().catch(() => new Promise((resolve) => setTimeout(resolve, 200)));
        await store.probe();
        expect((await store.changeSession({ sessionId: "ses_after", directory: "/p" }, NOW, {})).sessionId).toBe(
          "ses_after",
        );
      } finally {
        await admin.end();
        await store.close();
      }
    },
  );

  it.each(["node", "bun"] as const)(
    "under %s, a plain statement never runs inside a transaction, nor two transactions on one connection",
    { timeout: 60_000 },
    async (runtime) => {
      // Bun 1.3.14's pool ran half of them inside another call's transaction (oven-sh/bun#32004) until transactions
      // got connections of their own.
      const process = startProcess(runtime, "../store/pg-isolation-process.ts", { DB: await freshDatabase("iso") });
      const found = await process.waitFor("runtime", 45_000);
      expect(found).toMatchObject({ runtime, plainInsideTransaction: 0, sharedTransactions: 0, failed: 0 });
      expect(found.transactions).toBeGreaterThan(100);
      expect(found.plain).toBeGreaterThan(100);
    },
  );

  it("applies migrations once when eight processes open a fresh database at once", async () => {
    const url = await freshDatabase("migr");
    const stores = await Promise.all(Array.from({ length: 8 }, () => openEngineStore(url)));
    try {
      const applied = await pgQuery<{ n: string }>(url, "SELECT count(*) AS n FROM drizzle.__drizzle_migrations");
      const files = (await import("node:fs")).readdirSync("migrations-pg").filter((f) => f.endsWith(".sql"));
      expect(Number(applied[0]!.n)).toBe(files.length);
      expect(stores.every((s) => s instanceof PgStore)).toBe(true);
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
