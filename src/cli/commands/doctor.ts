import { existsSync } from "node:fs";
import type { Command } from "commander";
import { StoreOpenError, openStore } from "../../store/sqlite/open.js";
import {
  armedCountdowns,
  fileSize,
  quickCheck,
  schemaState,
  stoppedSessions,
  unsettledInjections,
} from "../../store/sqlite/queries.js";
import { CliError } from "../errors.js";
import { databasePath } from "../database.js";
import { localTime, table, untilOrLate } from "../format.js";
import { globals, print, printJson } from "../output.js";
import { leaseState } from "./status.js";

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
      const path = databasePath(db);
      if (!existsSync(path)) throw new CliError(`no database at ${path}`);
      let store;
      try {
        store = await openStore(path, { readonly: true });
      } catch (error) {
        throw new CliError(error instanceof StoreOpenError ? error.message : String(error));
      }
      const findings: Finding[] = [];
      const now = Date.now();
      let report: Record<string, unknown> = { path };
      try {
        const size = fileSize(store);
        const integrity = quickCheck(store.raw);
        findings.push(
          integrity.ok
            ? { level: "ok", check: "integrity", message: "PRAGMA quick_check: ok" }
            : {
                level: "fail",
                check: "integrity",
                message: `PRAGMA quick_check: ${integrity.messages.slice(0, 5).join("; ")}`,
              },
        );
        const schema = integrity.ok
          ? schemaState(store.raw)
          : { shipped: 0, applied: 0, latestShipped: null, latestApplied: null, pending: 0, newer: false };
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
        const armed = integrity.ok && schema.applied > 0 ? armedCountdowns(store.raw) : [];
        const unsettled = integrity.ok && schema.applied > 0 ? unsettledInjections(store.raw) : [];
        const stopped = integrity.ok && schema.applied > 0 ? stoppedSessions(store.raw) : [];
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
          driver: store.driver,
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
          if (armed.length > 0) {
            print(
              `\nArmed countdowns:\n${table(
                [
                  { header: "SESSION", value: (r: (typeof armed)[number]) => r.session_id },
                  { header: "FIRES", value: (r) => untilOrLate(r.deadline_at, now) },
                  { header: "OWNER", value: (r) => r.owner ?? "" },
                  { header: "LEASE", value: (r) => leaseState(r, now) },
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
        store.close();
      }
      if (findings.some((f) => f.level === "fail")) process.exitCode = 1;
    });
}
