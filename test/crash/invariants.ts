// What must hold in the database and at the host after any sequence of crashes and restarts.
import Database from "better-sqlite3";
import pg from "pg";
import { isPostgresUrl } from "../../src/store/open/open.js";
import { pgRows } from "../support/test-database.js";
import type { DeliveredPrompt } from "./scripted-server.js";

/** Rows of a SQLite file or a PostgreSQL database (a URL), read once the processes are done. */
export function selectFrom<T>(location: string, sql: { sqlite: string; postgres?: string }): T[] {
  if (isPostgresUrl(location)) return pgRows(location).all<T>(sql.postgres ?? sql.sqlite);
  const db = new Database(location, { readonly: true });
  try {
    return db.prepare(sql.sqlite).all() as T[];
  } finally {
    db.close();
  }
}

/**
 * The same, read without blocking this process: the scripted host the engines call runs here too, and a synchronous
 * read polled in a loop starves it (arming 20 sessions then took longer than their 3 s countdowns).
 */
export async function selectFromWithoutBlocking<T>(location: string, sql: { sqlite: string }): Promise<T[]> {
  if (!isPostgresUrl(location)) return selectFrom<T>(location, sql);
  const client = new pg.Client({ connectionString: location });
  await client.connect();
  try {
    return (await client.query(sql.sqlite)).rows as T[];
  } finally {
    await client.end();
  }
}

export interface InvariantReport {
  violations: string[];
  counts: Record<string, number>;
}

export function checkInvariants(dbPath: string, prompts: DeliveredPrompt[]): InvariantReport {
  const violations: string[] = [];
  const countdowns = selectFrom<{ id: string; state: string; end_reason: string | null }>(dbPath, {
    sqlite: "SELECT id, session_id, state, end_reason FROM countdowns",
  });
  const injections = selectFrom<{ id: string; countdown_id: string; status: string; message_id: string | null }>(
    dbPath,
    { sqlite: "SELECT id, countdown_id, status, message_id FROM injections" },
  );
  const audit = selectFrom<{ event: string; reason: string | null; countdown_id: string | null }>(dbPath, {
    sqlite: "SELECT event, reason, json_extract(detail, '$.countdownId') AS countdown_id FROM audit_events",
    postgres: "SELECT event, reason, detail::json->>'countdownId' AS countdown_id FROM audit_events",
  });

  const counts: Record<string, number> = {
    countdowns: countdowns.length,
    injections: injections.length,
    prompts: prompts.length,
  };
  for (const c of countdowns) counts[c.state] = (counts[c.state] ?? 0) + 1;
  for (const i of injections) counts[`injection_${i.status}`] = (counts[`injection_${i.status}`] ?? 0) + 1;
  for (const a of audit)
    if (a.event === "resumed" || a.event === "reconciled")
      counts[`${a.event}_${a.reason}`] = (counts[`${a.event}_${a.reason}`] ?? 0) + 1;

  // Nothing is left armed or pending once the last process has run to its end.
  for (const c of countdowns) if (c.state === "armed") violations.push(`countdown ${c.id} still armed`);
  for (const i of injections) if (i.status === "pending") violations.push(`injection ${i.id} still pending`);

  // Every countdown ended with an audit row that says how.
  const endedBy = new Map<string, string[]>();
  for (const a of audit)
    if (a.countdown_id) endedBy.set(a.countdown_id, [...(endedBy.get(a.countdown_id) ?? []), a.event]);
  for (const c of countdowns) {
    const events = endedBy.get(c.id) ?? [];
    const expected = c.state === "fired" ? "fired" : c.state === "expired" ? "expired" : null;
    if (expected && events.filter((e) => e === expected).length !== 1)
      violations.push(`countdown ${c.id} (${c.state}) has ${events.join(",")}`);
    if (c.state === "cancelled" && !events.some((e) => e === "cancelled" || e === "skipped"))
      violations.push(`countdown ${c.id} cancelled without audit`);
    if (!events.includes("armed")) violations.push(`countdown ${c.id} has no armed row`);
  }

  // A fired countdown has exactly one injection; an injection belongs to a fired countdown.
  const byCountdown = new Map<string, number>();
  for (const i of injections) byCountdown.set(i.countdown_id, (byCountdown.get(i.countdown_id) ?? 0) + 1);
  const states = new Map(countdowns.map((c) => [c.id, c.state]));
  for (const [id, n] of byCountdown) {
    if (n !== 1) violations.push(`countdown ${id} has ${n} injections`);
    if (states.get(id) !== "fired") violations.push(`injection for countdown ${id} in state ${states.get(id)}`);
  }

  // The host never saw the same continuation twice, and everything it saw is recorded as sent.
  const seen = new Map<string, number>();
  for (const p of prompts) seen.set(p.injectionId ?? "?", (seen.get(p.injectionId ?? "?") ?? 0) + 1);
  for (const [id, n] of seen) if (n > 1) violations.push(`continuation ${id} delivered ${n} times`);
  const status = new Map(injections.map((i) => [i.id, i.status]));
  for (const p of prompts)
    if (status.get(p.injectionId ?? "") !== "sent")
      violations.push(
        `delivered ${p.injectionId} (${p.sessionId}, by pid ${p.pid}) is ${status.get(p.injectionId ?? "") ?? "not in the database"}`,
      );
  for (const i of injections)
    if (i.status === "sent" && !seen.has(i.id)) violations.push(`injection ${i.id} is sent but the host never saw it`);
  return { violations, counts };
}

/**
 * What must hold of parks after crashes around them: each session parked once was woken by its time, once, and the
 * host saw exactly one continuation of it (none lost to a kill between the wake and the look, none doubled); a session
 * whose process died before its park was written was never continued. `sessionPrefix`: the sessions this case made.
 */
export function checkParks(location: string, prompts: DeliveredPrompt[], sessionPrefix: string): InvariantReport {
  const violations: string[] = [];
  const parks = selectFrom<{ id: string; session_id: string; state: string; end_reason: string | null }>(location, {
    sqlite: "SELECT id, session_id, state, end_reason FROM parks",
  }).filter((p) => p.session_id.startsWith(sessionPrefix));
  const promptsOf = new Map<string, number>();
  for (const p of prompts)
    if (p.sessionId.startsWith(sessionPrefix)) promptsOf.set(p.sessionId, (promptsOf.get(p.sessionId) ?? 0) + 1);
  const parked = new Set<string>();
  for (const park of parks) {
    if (parked.has(park.session_id)) violations.push(`session ${park.session_id} parked more than once`);
    parked.add(park.session_id);
    if (park.state !== "woke" || park.end_reason !== "time")
      violations.push(`park ${park.id} of ${park.session_id} ended ${park.state}:${park.end_reason ?? "-"}`);
    const continued = promptsOf.get(park.session_id) ?? 0;
    if (continued !== 1) violations.push(`session ${park.session_id} continued ${continued} times after its wake`);
  }
  for (const [sessionId, n] of promptsOf)
    if (!parked.has(sessionId)) violations.push(`session ${sessionId} never parked, continued ${n} times`);
  const woke = parks.filter((p) => p.state === "woke").length;
  return { violations, counts: { parks: parks.length, woke, continued: promptsOf.size } };
}

/**
 * The checks of finished lists after kills: every session's last run passed (and was the only one that did); every
 * interrupted run was followed by another; none is left running; a failure never came of a kill.
 */
export function checkChecks(location: string, sessionPrefix: string): InvariantReport {
  const violations: string[] = [];
  const runs = selectFrom<{ id: string; session_id: string; state: string; started_at: number | string }>(location, {
    sqlite: "SELECT id, session_id, state, started_at FROM verifications ORDER BY started_at",
  }).filter((r) => r.session_id.startsWith(sessionPrefix));
  const bySession = new Map<string, string[]>();
  for (const run of runs) bySession.set(run.session_id, [...(bySession.get(run.session_id) ?? []), run.state]);
  for (const [sessionId, states] of bySession) {
    if (states.at(-1) !== "passed") violations.push(`${sessionId}: its last run is ${states.at(-1)}`);
    if (states.filter((s) => s === "passed").length !== 1) violations.push(`${sessionId}: passed ${states.join(",")}`);
    if (states.some((s) => s === "failed" || s === "running"))
      violations.push(`${sessionId}: runs ${states.join(",")}`);
  }
  const interrupted = runs.filter((r) => r.state === "interrupted").length;
  return { violations, counts: { sessions: bySession.size, runs: runs.length, interrupted } };
}
