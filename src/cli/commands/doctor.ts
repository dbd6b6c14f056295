import type { Command } from "commander";
import { armedCountdowns, stoppedSessions, unsettledInjections } from "../../store/queries.js";
import { pgSchemaState, replicaStates, serverVersion, type ReplicaRow } from "../../store/pg/diagnostics.js";
import { PgStore } from "../../store/pg/pg-store.js";
import { ServerRoster, type ServerState } from "../../store/pg/server-roster.js";
import { fileSize, quickCheck, schemaState, type Integrity } from "../../store/sqlite/diagnostics.js";
import { databasePath, openForReading, query, shownLocation } from "../database.js";
import { duration } from "../format.js";
import { localTime, table, untilOrLate } from "../format.js";
import { globals, print, printJson } from "../output.js";
import { leaseState, livenessOf } from "./status.js";

interface Finding {
  level: "ok" | "warn" | "fail";
  check: string;
  message: string;
}

export function registerDoctor(program: Command): void {
  program
    .command("doctor")
    .description(
      "check the database: file, schema version, integrity, leases, unsettled continuations (exit 1 on a problem)",
    )
    .action(async (_options: unknown, command: Command) => {
      const { db, json } = globals(command);
      const location = databasePath(db);
      const path = shownLocation(location);
      const store = await openForReading(location);
      const pg = store instanceof PgStore ? store.connection : undefined;
      const file = store instanceof PgStore ? undefined : store.connection;
      const findings: Finding[] = [];
      const now = Date.now();
      let report: Record<string, unknown> = { path };
      try {
        const size = pg ? { bytes: 0, walBytes: 0 } : fileSize(file!.path);
        // PostgreSQL checks its own pages; what doctor can tell is whether it answers.
        const version = pg ? await query(() => serverVersion(pg)) : undefined;
        const integrity: Integrity = pg
          ? { ok: true, messages: [`PostgreSQL ${version} answers`] }
          : quickCheck(file!.raw);
        const checked = pg ? "server" : "PRAGMA quick_check";
        findings.push(
          integrity.ok
            ? { level: "ok", check: "integrity", message: pg ? integrity.messages[0]! : `${checked}: ok` }
            : {
                level: "fail",
                check: "integrity",
                message: `${checked}: ${integrity.messages.slice(0, 5).join("; ")}`,
              },
        );
        const schema = !integrity.ok
          ? { shipped: 0, applied: 0, latestShipped: null, latestApplied: null, pending: 0, newer: false }
          : pg
            ? await query(() => pgSchemaState(pg))
            : schemaState(file!.raw);
        findings.push(
          schema.newer
            ? {
                level: "fail",
                check: "schema",
                message: `migrated by a newer version (${schema.applied} applied, ${schema.shipped} shipped here): upgrade todo-continuation`,
              }
            : schema.pending > 0
              ? {
                  level: "warn",
                  check: "schema",
                  message: `${schema.pending} migration(s) pending: applied at the next plugin start or by \`todo-continuation migrate\``,
                }
              : { level: "ok", check: "schema", message: `${schema.applied}/${schema.shipped} migrations applied` },
        );
        const readable = integrity.ok && schema.applied > 0;
        const armed = readable ? await query(() => armedCountdowns(store.reader)) : [];
        const unsettled = readable ? await query(() => unsettledInjections(store.reader)) : [];
        const stopped = readable ? await query(() => stoppedSessions(store.reader)) : [];
        const replicas: ReplicaRow[] = pg && readable ? await query(() => replicaStates(pg)) : [];
        const servers: ServerState[] = pg && readable ? await query(() => new ServerRoster(pg).list()) : [];
        const alive = readable ? await query(() => livenessOf(store)) : () => false;
        if (pg) {
          const dead = replicas.filter((r) => !r.alive);
          findings.push(
            dead.length > 0
              ? {
                  level: "warn",
                  check: "replicas",
                  message: `${dead.length} of ${replicas.length} without a fresh heartbeat (their countdowns are adopted by the others)`,
                }
              : { level: "ok", check: "replicas", message: `${replicas.length} alive` },
          );
          const unfollowed = servers.filter((s) => !s.followed);
          if (servers.length > 0)
            findings.push(
              unfollowed.length > 0
                ? {
                    level: "warn",
                    check: "servers",
                    message: `${unfollowed.length} of ${servers.length} followed by no live replica (${unfollowed.map((s) => s.name).join(", ")}): is a \`serve --db\` replica running?`,
                  }
                : { level: "ok", check: "servers", message: `${servers.length} listed, each followed by one replica` },
            );
        }
        const late = armed.filter((a) => a.deadline_at < now - 60_000);
        findings.push(
          late.length > 0
            ? {
                level: "warn",
                check: "countdowns",
                message: `${late.length} armed countdown(s) more than a minute overdue (no live process owns their scope?)`,
              }
            : { level: "ok", check: "countdowns", message: `${armed.length} armed` },
        );
        const pending = unsettled.filter((u) => u.status === "pending");
        const unknown = unsettled.filter((u) => u.status === "unknown");
        findings.push(
          pending.length + unknown.length > 0
            ? {
                level: "warn",
                check: "injections",
                message: `${pending.length} pending, ${unknown.length} unknown (lost in a crash; the session was evaluated again)`,
              }
            : { level: "ok", check: "injections", message: "none pending or unknown" },
        );
        report = {
          path,
          driver: pg ? pg.driver : file!.driver,
          ...(pg ? { serverVersion: version, replicas, servers } : {}),
          bytes: size.bytes,
          walBytes: size.walBytes,
          schema,
          integrity,
          armed,
          unsettled,
          stoppedSessions: stopped.length,
          findings,
        };
        if (json) printJson(report);
        else {
          print(`database   ${path}`);
          if (pg) print(`server     PostgreSQL ${version}`);
          else
            print(`size       ${(size.bytes / 1024).toFixed(1)} KiB (+ ${(size.walBytes / 1024).toFixed(1)} KiB WAL)`);
          print(
            `schema     ${schema.applied} applied, ${schema.shipped} shipped${schema.latestApplied ? `, latest ${localTime(schema.latestApplied)}` : ""}`,
          );
          print(`stopped    ${stopped.length} session(s)\n`);
          print(
            table(
              [
                { header: "", value: (f: Finding) => f.level.toUpperCase() },
                { header: "CHECK", value: (f) => f.check },
                { header: "RESULT", value: (f) => f.message },
              ],
              findings,
            ),
          );
          if (replicas.length > 0) {
            print(
              `\nReplicas (heartbeat by the database's clock):\n${table(
                [
                  { header: "REPLICA", value: (r: ReplicaRow) => r.id },
                  { header: "KIND", value: (r) => r.kind },
                  { header: "HEARTBEAT", value: (r) => `${duration(r.heartbeatAgeMs)} ago` },
                  { header: "LEASE", value: (r) => (r.alive ? `held (${duration(r.leaseMs)})` : "lapsed") },
                  { header: "COUNTDOWNS", value: (r) => String(r.countdowns), align: "right" },
                ],
                replicas,
              )}`,
            );
          }
          if (servers.length > 0) {
            print(
              `\nServer leases (the fleet's OpenCode servers):\n${table(
                [
                  { header: "SERVER", value: (s: ServerState) => s.name },
                  { header: "URL", value: (s) => s.url },
                  { header: "FOLLOWED BY", value: (s) => (s.followed ? s.owner! : "nobody") },
                  { header: "SINCE", value: (s) => (s.followed ? localTime(s.ownedSince) : "") },
                  {
                    header: "STREAM",
                    value: (s) => (s.seenAgoMs === null ? "never" : `${duration(s.seenAgoMs)} ago`),
                  },
                ],
                servers,
              )}`,
            );
          }
          if (armed.length > 0) {
            print(
              `\nArmed countdowns:\n${table(
                [
                  { header: "SESSION", value: (r: (typeof armed)[number]) => r.session_id },
                  { header: "FIRES", value: (r) => untilOrLate(r.deadline_at, now) },
                  { header: "OWNER", value: (r) => r.owner ?? "" },
                  { header: "LEASE", value: (r) => leaseState(r, now, alive) },
                ],
                armed,
              )}`,
            );
          }
          if (unsettled.length > 0) {
            print(
              `\nUnsettled continuations:\n${table(
                [
                  { header: "INJECTION", value: (r: (typeof unsettled)[number]) => r.id },
                  { header: "SESSION", value: (r) => r.session_id },
                  { header: "STATUS", value: (r) => r.status },
                  { header: "SINCE", value: (r) => localTime(r.created_at) },
                ],
                unsettled,
              )}`,
            );
          }
        }
      } finally {
        await store.close();
      }
      if (findings.some((f) => f.level === "fail")) process.exitCode = 1;
    });
}
