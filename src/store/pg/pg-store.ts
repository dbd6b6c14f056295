// The store over PostgreSQL. Where SQLite serializes every writer with BEGIN IMMEDIATE, here a state change's script
// runs in a transaction that first takes its session's advisory lock (no row needs to exist for it), so that changes
// to one session serialize across processes and hosts while other sessions go on in parallel; a statement that
// changes a countdown or an injection still names the state it expects, so of two writers only one changes it.
// Liveness of an owner is its replica's heartbeat judged by the database's clock, and the claim is fenced by it.
import { hostname } from "node:os";
import { sql } from "drizzle-orm";
import { whyUnreachable } from "../open/failure.js";
import type { OperatorStore } from "../operator/operator.js";
import { ownerMayBeAlive } from "../owner.js";
import type { SqlReader } from "../operator/reader.js";
import { runAsync, type Change, type Script, type Statement } from "../script.js";
import { isBun } from "../open/runtime.js";
import type { StoreProblem } from "../types.js";
import type { PgConnection } from "./connection.js";
import { pgSchemaState, replicaStates, serverVersion } from "./diagnostics.js";
import { LiveOwners } from "./live-owners.js";
import { abortedByConflict, pgProblemOf } from "./problems.js";
import { bindPlaceholders, DB_NOW_MS, whole } from "./rows.js";
import { replicas } from "./schema.js";
import { PgServerRoster } from "./server-roster.js";
import { runOn } from "./statements.js";

export interface PgStoreOptions {
  /** What this process is, on its `replicas` row: `plugin`, `service`, `fleet`, `tui`, `cli`. */
  kind?: string;
}

const dbNow = sql.raw(DB_NOW_MS);

/** Tries of a change PostgreSQL keeps aborting as one side of a deadlock. */
const CONFLICT_ATTEMPTS = 3;

export class PgStore implements OperatorStore {
  readonly dialect = "postgresql" as const;
  readonly location: string;
  readonly reader: SqlReader;
  readonly roster: PgServerRoster;
  /** Owners whose heartbeat was fresh at the last look (brought up to date by every heartbeat and look in a change). */
  private readonly liveOwners = new LiveOwners();
  /** Runs a read's statements on the pool. */
  private readonly plain: (statement: Statement) => Promise<unknown>;
  private readonly startedAt = Date.now();

  constructor(
    readonly connection: PgConnection,
    private readonly options: PgStoreOptions = {},
  ) {
    this.location = connection.location;
    this.reader = {
      dialect: "postgresql",
      all: <T>(text: string, ...params: unknown[]) => connection.rows<T>(bindPlaceholders(text, params)),
    };
    this.roster = new PgServerRoster(connection);
    this.plain = runOn(connection.db, this.liveOwners);
  }

  get migrated() {
    return this.connection.migration;
  }

  read<T>(script: Script<T>): Promise<T> {
    return runAsync(script, this.plain);
  }

  /**
   * Runs the change's script in one transaction under its session's lock. One that PostgreSQL aborted to break a
   * deadlock with another replica's (changes of several sessions, a row another transaction holds) is run again: it
   * rolled back whole, and a script only reads and writes rows. Only a conflict that persists pauses the enforcer.
   */
  async change<T>(change: Change<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.connection.transaction(
          (tx) => runAsync(change.script(), runOn(tx, this.liveOwners)),
          change.session,
        );
      } catch (error) {
        if (attempt >= CONFLICT_ATTEMPTS || !abortedByConflict(error)) throw error;
      }
    }
  }

  // ── liveness across hosts ─────────────────────────────────────────────────

  /**
   * Writes this owner's heartbeat (the database's clock) and reads which owners are alive now, on the connection
   * kept for it (a burst of state changes queued for the pool does not delay it past the lease).
   */
  async heartbeat(owner: string, leaseMs: number, directory?: string): Promise<void> {
    const [host, pidText] = owner.split("/");
    await this.connection.liveness
      .insert(replicas)
      .values({
        id: owner,
        kind: this.options.kind ?? "plugin",
        host: host ?? hostname(),
        pid: Number(pidText) || process.pid,
        startedAt: this.startedAt,
        heartbeatAt: sql`${dbNow}`,
        leaseMs: Math.trunc(leaseMs),
        directory: directory ?? null,
      })
      .onConflictDoUpdate({ target: replicas.id, set: { heartbeatAt: sql`${dbNow}`, leaseMs: Math.trunc(leaseMs) } });
    const alive = await this.connection.liveness
      .select({ id: replicas.id })
      .from(replicas)
      .where(sql`${replicas.heartbeatAt} + ${replicas.leaseMs} >= ${dbNow}`);
    this.liveOwners.refreshed(whole(alive, ["id"]).map(({ id }) => id));
  }

  /**
   * Alive: a heartbeat fresh by the database's clock at the last look, unless the owner certainly is gone (a pid of
   * this very host that no longer exists: a process restarted after a crash need not wait out its own old lease).
   * Another host's pid or clock says nothing.
   */
  ownerAlive(owner: string | null): boolean {
    return owner !== null && this.liveOwners.wasFresh(owner) && ownerMayBeAlive(owner);
  }

  /** Gone at once rather than after a lease: others need not wait to adopt what this owner held. */
  async retire(owner: string): Promise<void> {
    await this.connection.db.delete(replicas).where(sql`${replicas.id} = ${owner}`);
    this.liveOwners.retired(owner);
  }

  // ── upkeep ────────────────────────────────────────────────────────────────

  /** A committed write (refused on a read-only server), bounded by the statement timeout. */
  async probe(): Promise<void> {
    await this.connection.ensureMigrated();
    await this.connection.transaction(async (tx) => {
      await tx.execute(sql`UPDATE ${replicas} SET heartbeat_at = heartbeat_at WHERE id = ''`);
    });
  }

  problemOf(error: unknown): StoreProblem | undefined {
    return pgProblemOf(error);
  }

  readonly whyUnreachable = isBun ? () => whyUnreachable(this.location) : undefined;

  async close(): Promise<void> {
    await this.connection.close();
  }

  // ── what operators ask ────────────────────────────────────────────────────

  schemaState() {
    return pgSchemaState(this.connection);
  }

  async diagnostics() {
    // PostgreSQL checks its own pages; what can be told from here is whether it answers.
    const version = await serverVersion(this.connection);
    return {
      driver: this.connection.driver,
      checkedBy: "server",
      integrity: { ok: true, messages: [`PostgreSQL ${version} answers`] },
      serverVersion: version,
    };
  }

  replicas() {
    return replicaStates(this.connection);
  }

  async liveness() {
    const alive = new Set((await this.replicas()).filter((r) => r.alive).map((r) => r.id));
    return (owner: string) => alive.has(owner);
  }
}
