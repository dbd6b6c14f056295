// A real PostgreSQL server for tests: Debian's server binaries, a fresh cluster in a temp folder, on a free loopback
// port. PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` user. A machine without
// the binaries fails here with the command that installs them (npm test's pretest step runs it when it can).
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

function serverBinaries(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "pg_ctl")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0)
    throw new Error(
      "PostgreSQL's server binaries are missing (no /usr/lib/postgresql/*/bin/pg_ctl): apt-get install postgresql",
    );
  return join(root, versions[0]!, "bin");
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const asRoot = process.getuid?.() === 0;

/** Runs a server binary as the cluster's owner. */
function runAsOwner(binary: string, args: string[]): string {
  const [command, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", binary, ...args]] : [binary, args];
  const result = spawnSync(command, argv, { encoding: "utf8", timeout: 60_000 });
  if (result.status !== 0)
    throw new Error(`${binary} ${args.join(" ")} failed (${result.status}): ${result.stderr || result.stdout}`);
  return result.stdout;
}

export class PostgresServer {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
  ) {}

  /** initdb (trust on loopback, no fsync) and start. */
  static async start(options: { settings?: Record<string, string> } = {}): Promise<PostgresServer> {
    const bin = serverBinaries();
    const dir = mkdtempSync(join(tmpdir(), "tc-pg-"));
    if (asRoot) chownSync(dir, uid("postgres"), gid("postgres"));
    runAsOwner(join(bin, "initdb"), [
      "-D",
      dir,
      "--auth=trust",
      "--no-sync",
      "-E",
      "UTF8",
      "--locale=C.UTF-8",
      "-U",
      "postgres",
    ]);
    const server = new PostgresServer(dir, await freePort(), bin);
    server.settings = { fsync: "off", max_connections: "200", ...options.settings };
    server.start();
    return server;
  }

  private settings: Record<string, string> = {};

  start(): void {
    const extra = Object.entries(this.settings)
      .map(([k, v]) => `-c ${k}=${v}`)
      .join(" ");
    runAsOwner(join(this.bin, "pg_ctl"), [
      "-D",
      this.dir,
      "-l",
      join(this.dir, "server.log"),
      "-o",
      `-c listen_addresses=127.0.0.1 -p ${this.port} -k ${this.dir} ${extra}`,
      "-w",
      "start",
    ]);
  }

  /** A fast shutdown: connections are cut, as when a database server goes away. */
  stop(mode: "fast" | "immediate" = "fast"): void {
    runAsOwner(join(this.bin, "pg_ctl"), ["-D", this.dir, "-m", mode, "-w", "stop"]);
  }

  running(): boolean {
    const result = spawnSync(join(this.bin, "pg_isready"), ["-h", "127.0.0.1", "-p", String(this.port)]);
    return result.status === 0;
  }

  url(database = "postgres"): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** A new empty database: each test gets its own, on one server. */
  async createDatabase(prefix = "tc"): Promise<string> {
    const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
    await this.admin(`CREATE DATABASE ${name}`);
    return this.url(name);
  }

  async admin(statement: string, params: unknown[] = [], database = "postgres"): Promise<pg.QueryResult> {
    const client = new pg.Client({ connectionString: this.url(database) });
    await client.connect();
    try {
      return await client.query(statement, params);
    } finally {
      await client.end();
    }
  }

  /** psql, the client users query with: tab-separated rows, no header. */
  psql(url: string, statement: string): string {
    return execFileSync("psql", [url, "-X", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c", statement], {
      encoding: "utf8",
    });
  }

  /** psql as a person sees it: an aligned table with a header. */
  psqlTable(url: string, statement: string): string {
    return execFileSync("psql", [url, "-X", "-P", "footer=off", "-c", statement], { encoding: "utf8" });
  }

  async destroy(): Promise<void> {
    try {
      if (this.running()) this.stop("immediate");
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

function uid(user: string): number {
  return Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
}

function gid(user: string): number {
  return Number(execFileSync("id", ["-g", user], { encoding: "utf8" }).trim());
}

/** Deletes a database's rows between tests that share it. */
export async function truncateAll(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("TRUNCATE sessions, countdowns, injections, audit_events, replicas RESTART IDENTITY");
  } finally {
    await client.end();
  }
}
