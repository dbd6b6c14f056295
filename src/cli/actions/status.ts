import { heldOf, type Held } from "../../core/holds.js";
import { STOP_NOTICES } from "../../core/skip-reasons.js";
import { ownerMayBeAlive } from "../../store/owner.js";
import {
  armedCountdowns,
  heldSessions,
  parkedSessions,
  pausedSessions,
  runningChecks,
  stoppedSessions,
  unsettledInjections,
  type ArmedRow,
  type HeldSessionRow,
  type ParkedRow,
  type RunningCheckRow,
} from "../../store/operator/queries.js";
import { databasePath, openForReading, query } from "../database.js";
import { duration, localTime, table, untilOrLate, type Column } from "../format.js";
import { print, printJson, type GlobalOptions } from "../output.js";

/** Whether an owner is alive: a live pid on this host (SQLite), or a fresh heartbeat by the database's clock. */
export type Liveness = (owner: string) => boolean;

export function leaseState(
  row: Pick<ArmedRow, "owner" | "lease_until">,
  now: number,
  alive: Liveness = ownerMayBeAlive,
): string {
  if (!row.owner) return "released (a process will adopt it)";
  if (!alive(row.owner)) return "owner is gone (adopted at next start)";
  if ((row.lease_until ?? 0) < now) return `expired ${duration(now - (row.lease_until ?? 0))} ago`;
  return `held, ${duration((row.lease_until ?? 0) - now)} left`;
}

/** A session something holds until someone acts, with why in the toast's words and the command that lifts it. */
export type HeldSession = Held & { sessionId: string; directory: string };

/** Every session held, the longest held first: stopped by any stop the core tells, paused, refused. */
export function heldSessionsOf(rows: readonly HeldSessionRow[]): HeldSession[] {
  return rows
    .flatMap((row) => {
      const held = heldOf(row);
      return held ? [{ sessionId: row.sessionId, directory: row.directory, ...held }] : [];
    })
    .sort((a, b) => (a.since ?? 0) - (b.since ?? 0));
}

/** What a park waits for, in its own words: the agent's reason, or where a limit's reset time came from. */
function parkedFor(row: ParkedRow): string {
  let detail: Record<string, unknown> = {};
  try {
    detail = JSON.parse(row.detail ?? "{}") as Record<string, unknown>;
  } catch {
    // A detail that is not JSON says nothing more than the reason column.
  }
  const said = detail.asked ?? detail.source ?? detail.message;
  return typeof said === "string" ? said : "";
}

/** The `verify` command running on finished lists: for how long, and whose it is. */
function checksSection(
  checking: RunningCheckRow[],
  now: number,
  lease: (r: Pick<ArmedRow, "owner" | "lease_until">) => string,
): string {
  return section(
    "Checks running (the `verify` command on a finished list; a message or `stop` cancels one)",
    checking,
    [
      { header: "SESSION", value: (r) => r.session_id },
      { header: "RUNNING", value: (r) => duration(Math.max(0, now - r.started_at)) },
      { header: "COMMAND", value: (r) => r.command, max: 40 },
      { header: "LEASE", value: lease },
      { header: "DIRECTORY", value: (r) => r.directory, max: 50 },
    ],
  );
}

function parkedSection(parked: ParkedRow[], now: number): string {
  return section("Parked sessions (waiting, at no cost, until their time; `wake` or `unpark` ends it)", parked, [
    { header: "SESSION", value: (r) => r.session_id },
    { header: "WAKES", value: (r) => untilOrLate(r.wake_at, now) },
    { header: "REASON", value: (r) => r.reason },
    { header: "FOR", value: (r) => parkedFor(r), max: 50 },
    { header: "DIRECTORY", value: (r) => r.directory, max: 50 },
  ]);
}

/** A titled table, or the title with "none". */
function section<R>(title: string, rows: R[], columns: Column<R>[]): string {
  return rows.length === 0 ? `${title}: none` : `${title} (${rows.length}):\n${table(columns, rows)}`;
}

export async function status(_options: object, { db, json }: GlobalOptions): Promise<void> {
  const store = await openForReading(databasePath(db));
  try {
    const now = Date.now();
    const alive = await query(() => store.liveness());
    const armed = await query(() => armedCountdowns(store.reader));
    const stopped = await query(() => stoppedSessions(store.reader));
    const paused = await query(() => pausedSessions(store.reader));
    const parked = await query(() => parkedSessions(store.reader));
    const checking = await query(() => runningChecks(store.reader));
    const held = heldSessionsOf(await query(() => heldSessions(store.reader, [...STOP_NOTICES])));
    const unsettled = await query(() => unsettledInjections(store.reader));
    if (json) return printJson({ armed, checking, parked, stopped, paused, held: held.map(heldJson), unsettled });
    const lease = (r: Pick<ArmedRow, "owner" | "lease_until">) => leaseState(r, now, alive);
    print(
      [
        section("Armed countdowns", armed, [
          { header: "SESSION", value: (r) => r.session_id },
          { header: "FIRES", value: (r) => untilOrLate(r.deadline_at, now) },
          {
            header: "OPEN",
            value: (r) => (r.todos_open === null ? "" : `${r.todos_open}/${r.todos_total}`),
            align: "right",
          },
          { header: "OWNER", value: (r) => r.owner ?? "" },
          { header: "LEASE", value: lease },
          { header: "DIRECTORY", value: (r) => r.directory, max: 50 },
        ]),
        checksSection(checking, now, lease),
        parkedSection(parked, now),
        // A session only paused is in the next section, with the message that paused it.
        section(
          "Stopped sessions",
          held.filter((h) => h.why.standing !== "paused"),
          [
            { header: "SESSION", value: (r) => r.sessionId },
            { header: "SINCE", value: (r) => localTime(r.since) },
            { header: "REASON", value: (r) => r.reasons.join(", ") },
            { header: "WHY", value: (r) => r.why.text },
            { header: "GO ON", value: (r) => r.goOn },
            { header: "DIRECTORY", value: (r) => r.directory, max: 50 },
          ],
        ),
        section(
          paused.length === 0
            ? "Paused sessions (you stepped in after a continuation)"
            : "Paused sessions (you stepped in after a continuation; held until the todos progress or a resume)",
          paused,
          [
            { header: "SESSION", value: (r) => r.session_id },
            { header: "SINCE", value: (r) => localTime(r.paused_at) },
            { header: "MESSAGE", value: (r) => r.pause_message_id ?? "" },
            { header: "DIRECTORY", value: (r) => r.directory, max: 50 },
          ],
        ),
        section("Unsettled continuations", unsettled, [
          { header: "INJECTION", value: (r) => r.id },
          { header: "SESSION", value: (r) => r.session_id },
          { header: "STATUS", value: (r) => r.status },
          { header: "SINCE", value: (r) => localTime(r.created_at) },
          {
            header: "NOTE",
            value: (r) => (r.status === "pending" ? lease(r) : (r.error ?? "")),
            max: 60,
          },
        ]),
      ].join("\n\n"),
    );
  } finally {
    await store.close();
  }
}

/** A held session as `--json` gives it: snake_case keys, as the tables' columns are. */
function heldJson(h: HeldSession) {
  return {
    session_id: h.sessionId,
    directory: h.directory,
    since: h.since,
    reasons: h.reasons,
    text: h.why.text,
    hint: h.why.hint ?? null,
    go_on: h.goOn,
  };
}
