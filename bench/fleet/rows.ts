// What the fleet's rows say during and after a run: who follows which server, what a replica holds, how its
// countdowns were taken over after it died, and whether any session was continued twice.
import type { BenchDatabase } from "./database.js";

export interface Lease {
  name: string;
  owner: string | null;
  ownedSince: number | null;
  alive: boolean;
}

export async function leases(db: BenchDatabase): Promise<Lease[]> {
  const rows = await db.all<{ name: string; owner: string | null; owned_since: string | null; alive: boolean }>(
    `SELECT s.name, s.owner, s.owned_since, EXISTS (SELECT 1 FROM replicas r WHERE r.id = s.owner
       AND r.heartbeat_at + r.lease_ms >= (extract(epoch from clock_timestamp()) * 1000)::bigint) AS alive
     FROM servers s`,
  );
  return rows.map((r) => ({
    name: r.name,
    owner: r.owner,
    ownedSince: r.owned_since === null ? null : Number(r.owned_since),
    alive: r.alive,
  }));
}

/** Each live owner with the servers it follows, busiest first. */
export async function owners(db: BenchDatabase): Promise<Array<[owner: string, servers: string[]]>> {
  const byOwner = new Map<string, string[]>();
  for (const s of await leases(db))
    if (s.owner && s.alive) byOwner.set(s.owner, [...(byOwner.get(s.owner) ?? []), s.name]);
  return [...byOwner].sort((a, b) => b[1].length - a[1].length);
}

/** The pid in an owner id (`host/pid/…`). */
export const pidOf = (owner: string) => Number(owner.split("/")[1]);

/** Servers with a live owner, and those whose event stream a follower has recorded. */
export async function followed(db: BenchDatabase): Promise<{ followed: number; streaming: number; total: number }> {
  const all = await leases(db);
  const [seen] = await db.all<{ n: string }>("SELECT count(*) AS n FROM servers WHERE seen_until IS NOT NULL");
  return { followed: all.filter((s) => s.alive).length, streaming: Number(seen!.n), total: all.length };
}

export async function held(db: BenchDatabase, owner: string): Promise<{ armed: number; pending: number }> {
  const [row] = await db.all<{ armed: string; pending: string }>(
    `SELECT (SELECT count(*) FROM countdowns WHERE state = 'armed' AND owner = ?) AS armed,
            (SELECT count(*) FROM injections WHERE status = 'pending' AND owner = ?) AS pending`,
    owner,
    owner,
  );
  return { armed: Number(row!.armed), pending: Number(row!.pending) };
}

export async function lastHeartbeat(db: BenchDatabase, owner: string): Promise<number> {
  const [row] = await db.all<{ heartbeat_at: string }>("SELECT heartbeat_at FROM replicas WHERE id = ?", owner);
  return Number(row!.heartbeat_at);
}

/** Nothing armed, pending or owed: from here nothing is sent without a new event. */
export async function atRest(db: BenchDatabase): Promise<{ armed: number; pending: number; owed: number }> {
  const [row] = await db.all<{ armed: string; pending: string; owed: string }>(
    `SELECT (SELECT count(*) FROM countdowns WHERE state = 'armed') AS armed,
            (SELECT count(*) FROM injections WHERE status = 'pending') AS pending,
            (SELECT count(*) FROM sessions WHERE recheck_at IS NOT NULL) AS owed`,
  );
  return { armed: Number(row!.armed), pending: Number(row!.pending), owed: Number(row!.owed) };
}

/** Continuations sent (`injected` rows) between two moments (ms). */
export async function injectedBetween(db: BenchDatabase, from: number, to: number): Promise<number> {
  const [row] = await db.all<{ n: string }>(
    "SELECT count(*) AS n FROM audit_events WHERE event = 'injected' AND at >= ? AND at < ?",
    from,
    to,
  );
  return Number(row!.n);
}

/** How late countdowns fired (the `fired` rows' lateMs) between two moments, by how they came to their process. */
export async function firedLateness(
  db: BenchDatabase,
  from: number,
  to: number,
): Promise<Array<{ lateMs: number; resumed: string | null }>> {
  const rows = await db.all<{ late: string; resumed: string | null }>(
    `SELECT (detail::json->>'lateMs')::bigint AS late, detail::json->>'resumed' AS resumed
       FROM audit_events WHERE event = 'fired' AND at >= ? AND at < ?`,
    from,
    to,
  );
  return rows.map((r) => ({ lateMs: Number(r.late), resumed: r.resumed }));
}

/** The countdowns another replica adopted from `owner`, each with how it ended, in ms after `since`. */
export async function adoptedFrom(
  db: BenchDatabase,
  owner: string,
  since: number,
): Promise<Array<{ adoptedMs: number; ended: string | null; dueMs: number | null; endedMs: number | null }>> {
  const rows = await db.all<{ adopted: string; ended: string | null; due: string | null; at: string | null }>(
    `SELECT r.at AS adopted, e.event AS ended, e.at AS at,
            (r.detail::json->>'deadlineAt')::bigint + (e.detail::json->>'lateMs')::bigint AS due
       FROM audit_events r LEFT JOIN audit_events e
         ON e.event IN ('fired', 'skipped', 'cancelled', 'expired')
        AND e.detail::json->>'countdownId' = r.detail::json->>'countdownId'
      WHERE r.event = 'resumed' AND r.detail::json->>'previousOwner' = ?`,
    owner,
  );
  const after = (value: string | null) => (value === null ? null : Number(value) - since);
  return rows.map((r) => ({
    adoptedMs: Number(r.adopted) - since,
    ended: r.ended,
    dueMs: r.ended === "fired" ? after(r.due) : null,
    endedMs: after(r.at),
  }));
}

/** What the rows say was done twice: a countdown with two injections, a session sent more than it needed. */
export async function doubledInRows(
  db: BenchDatabase,
  needed: number,
): Promise<{ countdownsInjectedTwice: number; sessionsOverContinued: number; sessionsSent: number }> {
  const [row] = await db.all<{ twice: string; over: string; sent: string }>(
    `SELECT (SELECT count(*) FROM (SELECT countdown_id FROM injections GROUP BY countdown_id
               HAVING count(*) > 1) t) AS twice,
            (SELECT count(*) FROM (SELECT session_id FROM audit_events WHERE event = 'injected'
               GROUP BY session_id HAVING count(*) > ?) o) AS over,
            (SELECT count(DISTINCT session_id) FROM injections WHERE status = 'sent') AS sent`,
    needed,
  );
  return {
    countdownsInjectedTwice: Number(row!.twice),
    sessionsOverContinued: Number(row!.over),
    sessionsSent: Number(row!.sent),
  };
}

/** Audit rows by event and reason, over the whole run. */
export async function auditCounts(db: BenchDatabase): Promise<Record<string, number>> {
  const rows = await db.all<{ k: string; n: string }>(
    "SELECT event || coalesce(':' || reason, '') AS k, count(*) AS n FROM audit_events GROUP BY 1 ORDER BY 1",
  );
  return Object.fromEntries(rows.map((r) => [r.k, Number(r.n)]));
}

/**
 * The sessions the simulated servers say are unfinished (`first`), then those the rows say were not continued exactly
 * `needed` times (sent: `injected`, or a pending one `reconciled: found`) or never found complete: each with its trail
 * of audit rows (ms after `since`), for the report of a run that lost or doubled work.
 */
export async function suspects(db: BenchDatabase, needed: number, since: number, first: string[] = [], limit = 8) {
  const sent = "a.event = 'injected' OR (a.event = 'reconciled' AND a.reason = 'found')";
  const rows = await db.all<{ session_id: string; server: string | null; injected: string }>(
    `SELECT s.session_id, s.server, count(a.id) FILTER (WHERE ${sent}) AS injected
       FROM sessions s LEFT JOIN audit_events a ON a.session_id = s.session_id
      GROUP BY s.session_id, s.server
     HAVING s.session_id = ANY(?::text[])
         OR count(a.id) FILTER (WHERE ${sent}) <> ?
         OR count(a.id) FILTER (WHERE a.event = 'skipped' AND a.reason = 'todos_complete') = 0
      ORDER BY s.session_id = ANY(?::text[]) DESC
      LIMIT ?`,
    first,
    needed,
    first,
    limit,
  );
  return Promise.all(
    rows.map(async (r) => {
      const trail = await db.all<{ at: string; event: string; reason: string | null; detail: string | null }>(
        "SELECT at, event, reason, detail FROM audit_events WHERE session_id = ? ORDER BY id",
        r.session_id,
      );
      return {
        session: r.session_id,
        server: r.server,
        injected: Number(r.injected),
        trail: trail.map(
          (t) =>
            `${Number(t.at) - since} ${t.event}${t.reason ? `:${t.reason}` : ""} ${(t.detail ?? "").slice(0, 300)}`,
        ),
      };
    }),
  );
}
