// How `doctor` shows what it found: for people, a header, the findings and a table for each thing worth a look; for
// scripts, one JSON document with the same.
import type { ReplicaState } from "../../store/operator/operator.js";
import type { ServerState } from "../../store/operator/roster.js";
import type { ArmedRow, UnsettledRow } from "../../store/operator/queries.js";
import { statusPath } from "../../plugin/status-file.js";
import { duration, localTime, table, untilOrLate, type Column } from "../format.js";
import { print, printJson, snakeCased } from "../output.js";
import { leaseState } from "./status.js";
import type { Examination } from "./doctor-database.js";
import { channelsTable, type ChannelReport, type NoticeSetup } from "./doctor-notices.js";
import { chosenOptions, type PluginExamination, type PluginFinding as Finding } from "./doctor-plugin.js";

function printHeader(path: string, x: Examination): void {
  const { diagnostics: d, schema } = x;
  print(`database   ${path}`);
  if (d.serverVersion !== undefined) print(`server     PostgreSQL ${d.serverVersion}`);
  else
    print(`size       ${((d.bytes ?? 0) / 1024).toFixed(1)} KiB (+ ${((d.walBytes ?? 0) / 1024).toFixed(1)} KiB WAL)`);
  print(
    `schema     ${schema.applied} applied, ${schema.shipped} shipped${schema.latestApplied ? `, latest ${localTime(schema.latestApplied)}` : ""}`,
  );
  print(`stopped    ${x.stopped} session(s)\n`);
}

function findingsTable(findings: Finding[]): string {
  return table(
    [
      { header: "", value: (f: Finding) => f.level.toUpperCase() },
      { header: "CHECK", value: (f) => f.check },
      { header: "RESULT", value: (f) => f.message },
    ],
    findings,
  );
}

function printTables(x: Examination, findings: Finding[], now: number): void {
  print(findingsTable(findings));
  const section = <R>(title: string, rows: R[], columns: Column<R>[]) => {
    if (rows.length > 0) print(`\n${title}:\n${table(columns, rows)}`);
  };
  section("Replicas (heartbeat by the database's clock)", x.replicas, [
    { header: "REPLICA", value: (r: ReplicaState) => r.id },
    { header: "KIND", value: (r) => r.kind },
    { header: "HEARTBEAT", value: (r) => `${duration(r.heartbeatAgeMs)} ago` },
    { header: "LEASE", value: (r) => (r.alive ? `held (${duration(r.leaseMs)})` : "lapsed") },
    { header: "COUNTDOWNS", value: (r) => String(r.countdowns), align: "right" },
  ]);
  section("Server leases (the fleet's OpenCode servers)", x.servers, [
    { header: "SERVER", value: (s: ServerState) => s.name },
    { header: "URL", value: (s) => s.url },
    { header: "FOLLOWED BY", value: (s) => (s.followed ? s.owner! : "nobody") },
    { header: "SINCE", value: (s) => (s.followed ? localTime(s.ownedSince) : "") },
    { header: "STREAM", value: (s) => (s.seenAgoMs === null ? "never" : `${duration(s.seenAgoMs)} ago`) },
  ]);
  section("Armed countdowns", x.armed, [
    { header: "SESSION", value: (r: ArmedRow) => r.session_id },
    { header: "FIRES", value: (r) => untilOrLate(r.deadline_at, now) },
    { header: "OWNER", value: (r) => r.owner ?? "" },
    { header: "LEASE", value: (r) => leaseState(r, now, x.alive) },
  ]);
  section("Unsettled continuations", x.unsettled, [
    { header: "INJECTION", value: (r: UnsettledRow) => r.id },
    { header: "SESSION", value: (r) => r.session_id },
    { header: "STATUS", value: (r) => r.status },
    { header: "SINCE", value: (r) => localTime(r.created_at) },
  ]);
  if (x.noticeChannels.length > 0)
    print(`\nNotifications (each channel's deliveries):\n${channelsTable(x.noticeChannels)}`);
}

function pluginJson({ directory, status, files }: PluginExamination) {
  return { directory, statusFile: statusPath(directory), status: status ?? null, configFiles: files.files };
}

function noticesJson(notices: NoticeSetup, channels: ChannelReport[]) {
  return { source: notices.source, channels, problems: notices.problems };
}

function printOptions({ status }: PluginExamination): void {
  const chosen = chosenOptions(status);
  if (chosen.length === 0) return;
  print(
    `\nOptions not at their default (highest source first: environment, plugin options, project file, user file):\n${table(
      [
        { header: "OPTION", value: (o: (typeof chosen)[number]) => o.option },
        { header: "VALUE", value: (o) => (o.value.length > 60 ? `${o.value.slice(0, 59)}…` : o.value) },
        { header: "FROM", value: (o) => o.source },
      ],
      chosen,
    )}`,
  );
}

/** What doctor found, whatever it looked into: the plugin, its notify channels, and every finding. */
export interface Report {
  plugin: PluginExamination;
  notices: NoticeSetup;
  findings: Finding[];
}

/** The report with no database file to look into: the plugin's findings and why the file is not there. */
export function printWithoutDatabase({ plugin, notices, findings }: Report, channels: ChannelReport[], json?: boolean) {
  if (json)
    return printJson(
      snakeCased({ plugin: pluginJson(plugin), notifications: noticesJson(notices, channels), findings }),
    );
  print(findingsTable(findings));
  printOptions(plugin);
}

/** The report of a database looked into. */
export function printWithDatabase(
  { plugin, notices, findings }: Report,
  path: string,
  x: Examination,
  now: number,
  json?: boolean,
): void {
  const { diagnostics: d } = x;
  if (json)
    return printJson(
      snakeCased({
        path,
        driver: d.driver,
        ...(d.serverVersion !== undefined
          ? { serverVersion: d.serverVersion, replicas: x.replicas, servers: x.servers }
          : { replicas: x.replicas }),
        bytes: d.bytes ?? 0,
        walBytes: d.walBytes ?? 0,
        schema: x.schema,
        integrity: d.integrity,
        armed: x.armed,
        unsettled: x.unsettled,
        stoppedSessions: x.stopped,
        plugin: pluginJson(plugin),
        notifications: noticesJson(notices, x.noticeChannels),
        findings,
      }),
    );
  printHeader(path, x);
  printTables(x, findings, now);
  printOptions(plugin);
}
