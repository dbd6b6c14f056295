// The `servers` table: the OpenCode servers a fleet follows, and which replica follows each. A server is leased to one
// fleet replica at a time: its `owner` holds it while the owner's heartbeat is fresh by the database's clock (the same
// liveness that fences countdown claims). Servers are taken by one statement that skips rows another replica is taking,
// so that replicas taking at the same moment neither take the same server nor wait for each other.
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { NewServer, ServerRoster, ServerRow, ServerState, Share } from "../operator/roster.js";
import { ServerExistsError } from "../operator/roster.js";
import type { PgConnection, PgDb } from "./connection.js";
import { pgErrorCode } from "./problems.js";
import { DB_NOW_MS, whole } from "./rows.js";
import { replicas, servers } from "./schema.js";

const dbNow = sql.raw(DB_NOW_MS);
const SERVER = ["name", "url", "directory", "addedAt"] as const;
/** A replica whose heartbeat is younger than its own lease. */
const fresh = sql`${replicas.heartbeatAt} + ${replicas.leaseMs} >= ${dbNow}`;

export class PgServerRoster implements ServerRoster {
  private readonly db: PgDb;

  constructor(connection: PgConnection) {
    this.db = connection.db;
  }

  async add(server: NewServer): Promise<ServerRow> {
    try {
      const [row] = await this.db
        .insert(servers)
        .values({
          name: server.name,
          url: server.url,
          directory: server.directory,
          username: server.username ?? null,
          passwordEnv: server.passwordEnv ?? null,
          addedAt: sql`${dbNow}`,
        })
        .returning();
      return row!;
    } catch (error) {
      if (pgErrorCode(error) === "23505") throw new ServerExistsError(server.name);
      throw error;
    }
  }

  /** False when no server has that name. Its follower lets it go at its next round. */
  async remove(name: string): Promise<boolean> {
    const removed = await this.db.delete(servers).where(eq(servers.name, name)).returning({ name: servers.name });
    return removed.length > 0;
  }

  async get(name: string): Promise<ServerRow | undefined> {
    return (await this.db.select().from(servers).where(eq(servers.name, name)).limit(1))[0];
  }

  /** Every server, with whether a live replica follows it and how fresh its stream was. */
  async list(): Promise<ServerState[]> {
    const rows = await this.db
      .select({
        server: servers,
        followed: ownerAlive(),
        seenAgoMs: sql<number | null>`${dbNow} - ${servers.seenUntil}`,
      })
      .from(servers)
      .orderBy(asc(servers.name));
    return rows.map((r) => ({
      ...r.server,
      followed: isTrue(r.followed),
      seenAgoMs: r.seenAgoMs === null ? null : Number(r.seenAgoMs),
    }));
  }

  /**
   * One round of sharing for `replica` (whose heartbeat the caller has just written): every live fleet replica's
   * share is the same within one (the first ones by id take the remainder), a server whose owner is no longer alive
   * is free, and this replica takes free servers up to its share. Servers beyond its share are named in `excess`,
   * not released here: the caller stops following them first. One it took less than `settleMs` ago is not named.
   */
  async share(replica: string, settleMs = 0): Promise<Share> {
    // Most rounds take nothing: a glance without locks says so. Locking every row every round cost each replica a
    // write per server (a row lock is written into the row) whether anything changed or not.
    const { share, quota, free, settling } = await this.plan(replica, settleMs);
    const wanted = Math.min(free.length, quota - share.held.length);
    if (wanted <= 0) return share;
    // One statement takes them: rows another replica is taking at this moment are skipped, not waited for. Replicas
    // that found a dead one's servers at the same lapse took turns on a lock over every row, each turn a few round
    // trips through a busy replica, and the last one's turn came seconds after the lapse (1,000 servers, 8 replicas).
    const taken = await this.db
      .update(servers)
      .set({ owner: replica, ownedSince: sql`${dbNow}` })
      .where(
        inArray(
          servers.name,
          this.db
            .select({ name: servers.name })
            .from(servers)
            .where(and(inArray(servers.name, free), freeFor(replica)))
            .orderBy(asc(servers.name))
            .limit(wanted)
            .for("update", { skipLocked: true }),
        ),
      )
      .returning();
    for (const s of taken) settling.add(s.name);
    const held = [...share.held, ...taken];
    return { ...share, held, excess: excessOf(held, settling, quota) };
  }

  /** What a round would take and give up, from the rows as they are. */
  private async plan(replica: string, settleMs: number) {
    const rows = await this.db
      .select({
        server: servers,
        heldForMs: sql<string | null>`${dbNow} - ${servers.ownedSince}`,
        ownerAlive: ownerAlive(),
      })
      .from(servers)
      .orderBy(asc(servers.name));
    const all = whole(
      rows.map((r) => r.server),
      SERVER,
    );
    const settling = new Set(
      rows.filter((r) => r.heldForMs !== null && Number(r.heldForMs) < settleMs).map((r) => r.server.name),
    );
    const peers = await this.db
      .select({ id: replicas.id, lapseInMs: sql<string>`${replicas.heartbeatAt} + ${replicas.leaseMs} - ${dbNow}` })
      .from(replicas)
      .where(and(eq(replicas.kind, "fleet"), fresh))
      .orderBy(asc(replicas.id));
    const live = peers.map((r) => r.id);
    const lapses = peers.filter((r) => r.id !== replica).map((r) => Number(r.lapseInMs));
    if (!live.includes(replica)) live.push(replica);
    live.sort();
    const orphaned = new Set(rows.filter((r) => !isTrue(r.ownerAlive)).map((r) => r.server.name));
    const base = Math.floor(all.length / live.length);
    const quota = base + (live.indexOf(replica) < all.length % live.length ? 1 : 0);
    const held = all.filter((s) => s.owner === replica);
    const free = all.filter((s) => s.owner !== replica && orphaned.has(s.name));
    const share: Share = {
      held,
      excess: excessOf(held, settling, quota),
      replicas: live.length,
      nextLapseInMs: lapses.length > 0 ? Math.min(...lapses) : null,
    };
    return { share, quota, free: free.map((s) => s.name), settling };
  }

  /** Hands servers back (if still this replica's), so that a replica with fewer takes them at its next round. */
  async handBack(replica: string, names: string[]): Promise<void> {
    if (names.length === 0) return;
    await this.db
      .update(servers)
      .set({ owner: null, ownedSince: null })
      .where(inArray(servers.name, this.lockedInNameOrder(replica, names)));
  }

  /**
   * Records that this replica has the event streams of `names` now: a successor catches up from here. A row another
   * replica's share holds locked is left for the next round rather than waited for: waiting held this round up.
   */
  async seen(replica: string, names: string[]): Promise<void> {
    if (names.length === 0) return;
    await this.db
      .update(servers)
      .set({ seenUntil: sql`${dbNow}` })
      .where(inArray(servers.name, this.lockedInNameOrder(replica, names, true)));
  }

  /**
   * Those of `names` still held by `replica`, their rows locked in name order: the order `share` locks every row in.
   * An update that locked its rows in whatever order it found them deadlocked with another replica's share (measured:
   * thousands an hour with 1,000 servers and 8 replicas, each costing a round).
   */
  private lockedInNameOrder(replica: string, names: string[], skipLocked = false) {
    const rows = this.db
      .select({ name: servers.name })
      .from(servers)
      .where(and(inArray(servers.name, names), eq(servers.owner, replica)))
      .orderBy(asc(servers.name));
    return skipLocked ? rows.for("update", { skipLocked: true }) : rows.for("update");
  }
}

/** Whether a server's owner is a replica whose heartbeat is fresh (false for a server nobody holds). */
function ownerAlive() {
  return sql<boolean>`EXISTS (SELECT 1 FROM ${replicas} WHERE ${replicas.id} = ${servers.owner} AND ${fresh})`;
}

/** A boolean column as either driver gives it back. */
const isTrue = (value: unknown) => value === true || String(value) === "true";

/** A server `replica` may take: nobody's, or another replica's whose heartbeat is no longer fresh. */
function freeFor(replica: string) {
  return sql`(${servers.owner} IS DISTINCT FROM ${replica} AND NOT ${ownerAlive()})`;
}

/** The most recently taken of those held beyond the quota (the longest-held keep their followers), none still settling. */
function excessOf(held: ServerRow[], settling: Set<string>, quota: number): string[] {
  return held
    .filter((s) => !settling.has(s.name))
    .sort((a, b) => (b.ownedSince ?? 0) - (a.ownedSince ?? 0) || b.name.localeCompare(a.name))
    .slice(0, Math.max(0, held.length - quota))
    .map((s) => s.name);
}
