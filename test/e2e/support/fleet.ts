// A fleet for the tests: replicas of `todo-continuation serve --db postgres://…` (the built CLI) share OpenCode
// servers (real `opencode serve` processes, or simulated ones: fleet-hosts.ts), all in one project path as pods are,
// through the `servers` table, on one real PostgreSQL database; sessions that need two continuations each; and what
// the rows and the servers say about the run.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { expect } from "vitest";
import { ROOT } from "../../crash/processes.js";
import { freshDatabase } from "../../support/pg-database.js";
import { PrometheusServer } from "../../support/prometheus.js";
import { sleep, waitFor } from "../../support/wait-for.js";
import { CONTINUATIONS_PER_SESSION, RealOpenCode, type FleetHosts, type FleetSession } from "./fleet-hosts.js";
import { freePort } from "./tcp-proxy.js";

const BIN = join(ROOT, "dist", "cli", "main.js");
const exec = promisify(execFile);
export const LEASE_MS = 3000;
/** The replicas' round: a third of the lease. */
export const TICK_MS = LEASE_MS / 3;
const OPTIONS = { countdownSeconds: 1, leaseMs: LEASE_MS };

export interface Replica {
  child: ChildProcess;
  log: string;
  exited: Promise<number | null>;
  /** Its `--listen` address (host:port): its status, metrics (what Prometheus scrapes) and page, when it has one. */
  target?: string;
}

interface ServerLease {
  name: string;
  owner: string | null;
  alive: boolean;
  owned_since: number | null;
}

/** The OpenCode servers, the database and the replicas of one test. */
export class Fleet {
  readonly root = mkdtempSync(join(tmpdir(), "tc-fleet-"));
  readonly replicas: Replica[] = [];
  readonly sessions: FleetSession[] = [];
  url = "";
  /** A real Prometheus scraping the replicas (the package's scrape configuration and rules), when asked for. */
  prometheus: PrometheusServer | undefined;
  /** The --listen addresses still to give to replicas started from now on (Prometheus knows them all from the start). */
  private readonly targets: string[] = [];
  /** Read asynchronously: the scripted model answers OpenCode from this process, and a synchronous read
   * polled in a loop would starve it, and with it every OpenCode server. */
  private pool: pg.Pool | undefined;

  /**
   * `options`: more enforcer options for every replica (its `--options`), over the fleet's own; `hosts`: the OpenCode
   * servers they follow (real ones by default).
   */
  constructor(
    private readonly options: Record<string, unknown> = {},
    readonly hosts: FleetHosts = new RealOpenCode(),
  ) {}

  get servers() {
    return this.hosts.servers;
  }

  async all<T = Record<string, unknown>>(text: string, ...params: unknown[]): Promise<T[]> {
    let n = 0;
    return (
      await this.pool!.query(
        text.replace(/\?/g, () => `$${++n}`),
        params,
      )
    ).rows as T[];
  }

  /**
   * Starts the servers and replicas on a fresh database of the run's PostgreSQL, or on `url`. `metrics`: how many
   * replicas (those started now and later) serve their metrics, scraped by a real Prometheus; `listening`: how many
   * serve their `--listen` address (their status, metrics and page) with no Prometheus, when more than `metrics`.
   */
  async start(servers: number, replicas: number, url?: string, metrics = 0, listening = metrics): Promise<void> {
    if (!existsSync(BIN)) throw new Error("the CLI is not built: run `npm run build` (npm test does)");
    this.url = url ?? (await freshDatabase("fleet"));
    this.pool = new pg.Pool({ connectionString: this.url, max: 2 });
    // The test's own reads ride out a database restart.
    this.pool.on("error", () => undefined);
    // One project path for every server, as pods mount the same workspace path: only `server` tells rows apart.
    const project = join(this.root, "workspace");
    mkdirSync(project, { recursive: true });
    await this.hosts.start(servers, this.root, project);
    for (const [i, server] of this.servers.entries())
      await exec(
        process.execPath,
        [BIN, "--db", this.url, "servers", "add", "--url", server.url].concat([
          "--directory",
          project,
          "--name",
          `pod-${i}`,
        ]),
      );
    for (let i = 0; i < Math.max(metrics, listening); i++) this.targets.push(`127.0.0.1:${await freePort()}`);
    const scraped = this.targets.slice(0, metrics);
    for (let i = 0; i < replicas; i++) this.startReplica();
    if (metrics > 0) this.prometheus = await PrometheusServer.start(scraped);
    await waitFor(
      "every server followed, by every replica",
      async () => {
        const leases = await this.leases();
        return leases.every((s) => s.alive) && new Set(leases.map((s) => s.owner)).size === Math.min(servers, replicas);
      },
      { timeoutMs: 60_000, interval: 100 },
    );
    await waitFor(
      "every server's event stream connected",
      async () => (await this.all("SELECT name FROM servers WHERE seen_until IS NOT NULL")).length === servers,
      { timeoutMs: 30_000, interval: 100 },
    );
  }

  startReplica(): Replica {
    const target = this.targets.shift();
    const listen = target ? ["--listen", target] : [];
    const options = JSON.stringify({ ...OPTIONS, ...this.options });
    const child = spawn(process.execPath, [BIN, "serve", "--db", this.url, "--options", options, ...listen], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const replica: Replica = {
      child,
      log: "",
      exited: new Promise((resolve) => child.once("exit", (code) => resolve(code))),
      target,
    };
    const append = (chunk: Buffer) => {
      replica.log += chunk.toString();
      if (replica.log.length > 4_000_000) replica.log = replica.log.slice(-2_000_000);
    };
    child.stdout!.on("data", append);
    child.stderr!.on("data", append);
    this.replicas.push(replica);
    return replica;
  }

  /** The replica process behind an owner id (`host/pid/…`). */
  replicaOf(owner: string): Replica {
    const pid = Number(owner.split("/")[1]);
    const replica = this.replicas.find((r) => r.child.pid === pid);
    if (!replica) throw new Error(`no replica with pid ${pid}`);
    return replica;
  }

  leases(): Promise<ServerLease[]> {
    return this.all<ServerLease>(
      `SELECT s.name, s.owner, s.owned_since, EXISTS (SELECT 1 FROM replicas r WHERE r.id = s.owner
         AND r.heartbeat_at + r.lease_ms >= (extract(epoch from clock_timestamp()) * 1000)::bigint) AS alive
       FROM servers s ORDER BY s.name`,
    );
  }

  /** The owner that follows the most servers, with them. */
  async busiestOwner(): Promise<[string, string[]]> {
    const byOwner = new Map<string, string[]>();
    for (const s of await this.leases()) if (s.owner) byOwner.set(s.owner, [...(byOwner.get(s.owner) ?? []), s.name]);
    return [...byOwner.entries()].sort((a, b) => b[1].length - a[1].length)[0]!;
  }

  /** Countdowns of `owner` that another replica adopted (`resumed`) or ended as too late (`expired`). */
  async adoptedFrom(owner: string): Promise<number> {
    const rows = await this.all(
      "SELECT id FROM audit_events WHERE event IN ('resumed', 'expired') AND detail LIKE ?",
      `%"previousOwner":"${owner}"%`,
    );
    return rows.length;
  }

  /** The run is under way: its first continuations have gone out. */
  underWay(): Promise<unknown> {
    return waitFor(
      "the first continuation sent",
      async () => (await this.all("SELECT id FROM injections WHERE status = 'sent' LIMIT 1")).length > 0,
      { timeoutMs: 120_000, interval: 100 },
    );
  }

  async held(owner: string) {
    const armed = await this.all("SELECT id FROM countdowns WHERE state = 'armed' AND owner = ?", owner);
    const pending = await this.all("SELECT id FROM injections WHERE status = 'pending' AND owner = ?", owner);
    return { armed: armed.length, pending: pending.length };
  }

  async createSessions(perServer: number): Promise<void> {
    for (const [i, server] of this.servers.entries())
      for (let n = 0; n < perServer; n++) {
        const created = await server.client.session.create({ body: { title: `fleet ${i}/${n}` }, throwOnError: true });
        this.sessions.push({ server: i, id: created.data.id, tag: `p${i}-s${n}` });
      }
  }

  /** Prompts every session, in waves half a second apart, so that what a test does next lands mid-run. */
  promptInWaves(waves: number): Promise<void> {
    const prompting = this.prompt(waves);
    // Awaited later; a server that fails meanwhile must fail the test there, not as an unhandled rejection.
    prompting.catch(() => undefined);
    return prompting;
  }

  private async prompt(waves: number): Promise<void> {
    const perWave = Math.ceil(this.sessions.length / waves);
    for (let w = 0; w < waves; w++) {
      await Promise.all(
        this.sessions.slice(w * perWave, (w + 1) * perWave).map((s) =>
          this.servers[s.server]!.client.session.promptAsync({
            path: { id: s.id },
            body: { parts: [{ type: "text", text: `Work through the list. fleet-tag: ${s.tag}` }] },
            throwOnError: true,
          }),
        ),
      );
      await sleep(500);
    }
  }

  /**
   * Waits until every session has had its todos completed and said so, then until the fleet is at rest: nothing armed,
   * pending or owed (`recheck_at`) in the database, and every session idle on its server. A late double would need one
   * of those first; from there nothing can be sent without a new event, so the verdict is taken at once.
   */
  async finished(timeoutMs: number): Promise<void> {
    const total = this.sessions.length;
    const done = async () => {
      const rows = await this.all<{ session_id: string }>(
        "SELECT DISTINCT session_id FROM audit_events WHERE event = 'skipped' AND reason = 'todos_complete'",
      );
      return new Set(rows.map((r) => r.session_id));
    };
    try {
      await waitFor("every session to finish its todos", async () => (await done()).size >= total, {
        timeoutMs,
        interval: 100,
      });
    } catch (error) {
      const finished = await done();
      const stuck = this.sessions.filter((s) => !finished.has(s.id)).slice(0, 5);
      const trails = await Promise.all(
        stuck.map(async (s) => `${s.tag} ${s.id}: ${(await this.trail(s.id)).join(", ")}`),
      );
      throw new Error(
        `${(error as Error).message}: ${total - finished.size} of ${total} unfinished, e.g.\n${trails.join("\n")}`,
      );
    }
    let state: Record<string, unknown> = {};
    await waitFor(
      () => `the fleet at rest (now ${JSON.stringify(state)})`,
      async () => {
        const [row] = await this.all<{ armed: string; pending: string; owed: string }>(
          `SELECT (SELECT count(*) FROM countdowns WHERE state = 'armed') AS armed,
                  (SELECT count(*) FROM injections WHERE status = 'pending') AS pending,
                  (SELECT count(*) FROM sessions WHERE recheck_at IS NOT NULL) AS owed`,
        );
        state = { armed: Number(row!.armed), pending: Number(row!.pending), owed: Number(row!.owed) };
        if (state.armed || state.pending || state.owed) return false;
        const busy = await this.busySessions();
        state.busy = busy.length;
        return busy.length === 0;
      },
      { timeoutMs: 60_000, interval: 100 },
    );
  }

  /** The fleet's sessions that their server reports busy (or retrying). */
  async busySessions(): Promise<string[]> {
    const busy: string[] = [];
    for (const [i, server] of this.servers.entries()) {
      const statuses = await server.client.session.status({ throwOnError: true, signal: AbortSignal.timeout(10_000) });
      const byId = statuses.data as Record<string, { type: string }>;
      for (const s of this.sessions) if (s.server === i && byId[s.id] && byId[s.id]!.type !== "idle") busy.push(s.tag);
    }
    return busy;
  }

  async trail(sessionId: string): Promise<string[]> {
    const rows = await this.all<{ event: string; reason: string | null }>(
      "SELECT event, reason FROM audit_events WHERE session_id = ? ORDER BY id",
      sessionId,
    );
    return rows.map((r) => (r.reason ? `${r.event}:${r.reason}` : r.event));
  }

  /** Everything a post-mortem needs, kept outside the test's folder (which is deleted). */
  async keep(): Promise<string> {
    const kept = mkdtempSync(join(tmpdir(), "tc-fleet-failure-"));
    this.replicas.forEach((r, i) => writeFileSync(join(kept, `replica-${i}-${r.child.pid}.log`), r.log));
    this.servers.forEach((s, i) => writeFileSync(join(kept, `opencode-pod-${i}.log`), s.output()));
    for (const table of ["audit_events", "countdowns", "injections", "notices", "replicas", "servers"])
      writeFileSync(join(kept, `${table}.json`), JSON.stringify(await this.all(`SELECT * FROM ${table}`), null, 1));
    return kept;
  }

  /**
   * What the servers took is the ground truth: continuations per session, and each session's final todos. `owed`: the
   * continuations each session must take (more than its todos need when a turn of it fails).
   */
  async verdict(owed = CONTINUATIONS_PER_SESSION) {
    const continuations = this.hosts.continuations(this.sessions);
    const count = (s: FleetSession) => continuations.get(s.id) ?? 0;
    const open: string[] = [];
    for (const s of this.sessions) {
      const todos = await this.servers[s.server]!.client.session.todo({ path: { id: s.id }, throwOnError: true });
      if ((todos.data as Array<{ status: string }>).some((t) => t.status !== "completed")) open.push(s.tag);
    }
    const sent = await this.all<{ session_id: string; server: string; n: number }>(
      "SELECT session_id, server, count(*) AS n FROM injections WHERE status = 'sent' GROUP BY session_id, server",
    );
    const counts = await this.all<{ k: string; n: string }>(
      "SELECT event || coalesce(':' || reason, '') AS k, count(*) AS n FROM audit_events GROUP BY 1 ORDER BY 1",
    );
    const audit = Object.fromEntries(counts.map((r) => [r.k, Number(r.n)]));
    return {
      continuations: [...continuations.values()].reduce((a, b) => a + b, 0),
      lost: this.sessions.filter((s) => count(s) < owed).map((s) => s.tag),
      doubled: this.sessions.filter((s) => count(s) > owed).map((s) => s.tag),
      open,
      sent,
      audit,
    };
  }

  /** The rows agree with the model, each under its own server's name. */
  async expectRowsAgree(
    sent: Array<{ session_id: string; server: string; n: number }>,
    owed = CONTINUATIONS_PER_SESSION,
  ): Promise<void> {
    expect(sent).toHaveLength(this.sessions.length);
    const serverOf = new Map(this.sessions.map((s) => [s.id, `pod-${s.server}`]));
    for (const row of sent) {
      expect(Number(row.n)).toBe(owed);
      expect(row.server).toBe(serverOf.get(row.session_id));
    }
    expect(await this.all("SELECT session_id FROM sessions WHERE server IS NULL")).toEqual([]);
  }

  /** After the churn: every server followed by one live replica, shares within one of each other. */
  async expectFairShares(replicas: number): Promise<number[]> {
    const leases = await this.leases();
    const shares = new Map<string, number>();
    for (const s of leases) shares.set(s.owner!, (shares.get(s.owner!) ?? 0) + 1);
    expect(leases.every((s) => s.alive)).toBe(true);
    expect(shares.size).toBe(replicas);
    expect(Math.max(...shares.values()) - Math.min(...shares.values())).toBeLessThanOrEqual(1);
    return [...shares.values()].sort();
  }

  async stop(): Promise<void> {
    await this.prometheus?.stop();
    for (const r of this.replicas) {
      r.child.kill("SIGCONT");
      r.child.kill("SIGKILL");
    }
    await this.hosts.stop();
    await this.pool?.end();
    rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * How the killed replica's countdowns fared, from the rows (a scrape a second is too coarse to time it): the time from
 * the kill until another replica adopted them, its timer made them due, and their `fired` rows were written, beside
 * every fire's queue and check and every look's time. Reported, not asserted: a figure of this machine's speed.
 */
export async function adoptionFigures(fleet: Fleet, victimId: string, killedAt: number): Promise<string> {
  // Each countdown adopted from the killed replica, and how it ended: for a fired one, when the adopter's timer made it
  // due (its deadline plus how late), how long it queued, how long the guards' second look took, and its `fired` row.
  const adopted = await fleet.all<{
    adopted: string;
    ended: string | null;
    due: string | null;
    queued: string | null;
    check: string | null;
    at: string | null;
  }>(
    `SELECT r.at AS adopted, e.event AS ended,
            (r.detail::json->>'deadlineAt')::bigint + (e.detail::json->>'lateMs')::bigint AS due,
            e.detail::json->>'queuedMs' AS queued, e.detail::json->>'checkMs' AS "check", e.at AS at
       FROM audit_events r LEFT JOIN audit_events e
         ON e.event IN ('fired', 'skipped', 'cancelled', 'expired')
        AND e.detail::json->>'countdownId' = r.detail::json->>'countdownId'
      WHERE r.event = 'resumed' AND r.detail::json->>'previousOwner' = ?`,
    victimId,
  );
  const fired = adopted.filter((row) => row.ended === "fired");
  // Every fire's queue and check, and every look's time, for comparison: how slowly OpenCode answered all along.
  const everyFire = await fleet.all<{ queued: string; check: string }>(
    `SELECT detail::json->>'queuedMs' AS queued, detail::json->>'checkMs' AS "check" FROM audit_events WHERE event = 'fired'`,
  );
  const looks = await fleet.all<{ look: string }>(
    `SELECT detail::json->>'lookMs' AS look FROM audit_events WHERE event = 'armed' AND detail::json->>'lookMs' IS NOT NULL`,
  );
  const spread = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    if (sorted.length === 0) return "none";
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    return `${sorted[0]}/${at(0.5)}/${sorted.at(-1)} ms`;
  };
  const sinceKill = (rows: typeof adopted, key: "adopted" | "due" | "at") =>
    spread(rows.filter((row) => row[key] !== null).map((row) => Number(row[key]) - killedAt));
  const endings = new Map<string, number>();
  for (const row of adopted) endings.set(row.ended ?? "open", (endings.get(row.ended ?? "open") ?? 0) + 1);
  const ended = [...endings].map(([how, count]) => `${how} ${count}`);
  return (
    `(rows, min/median/max after the kill, lease ${LEASE_MS} ms) the killed replica's ${adopted.length} countdown(s) ` +
    `adopted ${sinceKill(adopted, "adopted")}, ended ${ended.join(", ")}; the fired ones due ${sinceKill(fired, "due")}, ` +
    `queued ${spread(fired.map((row) => Number(row.queued)))}, checked ${spread(fired.map((row) => Number(row.check)))}, ` +
    `fired ${sinceKill(fired, "at")}; every fire queued ${spread(everyFire.map((row) => Number(row.queued)))}, ` +
    `checked ${spread(everyFire.map((row) => Number(row.check)))}; every arm's look ${spread(looks.map((row) => Number(row.look)))}`
  );
}
