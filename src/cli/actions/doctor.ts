// `todo-continuation doctor`: the plugin's and the database's health in one look — whether the plugin runs in this
// project and with which options (and why not), the configuration files, then file or server, schema, integrity, who
// is alive, the fleet's servers, countdowns and continuations that look stuck. Exit 1 when a check fails.
import type { Diagnostics, OperatorStore, ReplicaState, SchemaState } from "../../store/operator/operator.js";
import type { ServerState } from "../../store/operator/roster.js";
import {
  armedCountdowns,
  billedModels,
  stoppedSessions,
  unsettledInjections,
  type ArmedRow,
  type ModelPricing,
  type UnsettledRow,
} from "../../store/operator/queries.js";
import { databasePath, openForReading, query, shownLocation } from "../database.js";
import { duration, localTime, table, untilOrLate, type Column } from "../format.js";
import { print, printJson, snakeCased, type GlobalOptions } from "../output.js";
import { leaseState } from "./status.js";
import {
  channelReports,
  channelsTable,
  noticeFindings,
  noticeSetup,
  statusWithoutSecrets,
  type ChannelReport,
  type NoticeSetup,
} from "./doctor-notices.js";
import {
  chosenOptions,
  examinePlugin,
  missingDatabase,
  type PluginExamination,
  type PluginFinding,
} from "./doctor-plugin.js";
import { statusPath } from "../../plugin/status-file.js";
import { isPostgresUrl } from "../../store/open/location.js";
import { noticeChannels } from "../../store/notices/queries.js";
import { existsSync } from "node:fs";
import { resolve } from "node:path";

type Finding = PluginFinding;

/** What doctor read from the database. */
interface Examination {
  diagnostics: Diagnostics;
  schema: SchemaState;
  armed: ArmedRow[];
  unsettled: UnsettledRow[];
  stopped: number;
  replicas: ReplicaState[];
  servers: ServerState[];
  /** Empty on a database whose bills table is not there yet (a migration pending). */
  models: ModelPricing[];
  /** Each channel configured or seen in the outbox; the configured ones alone on a database without it yet. */
  noticeChannels: ChannelReport[];
  alive: (owner: string) => boolean;
}

const NO_SCHEMA: SchemaState = {
  shipped: 0,
  applied: 0,
  latestShipped: null,
  latestApplied: null,
  pending: 0,
  newer: false,
};

async function examine(store: OperatorStore, notices: NoticeSetup): Promise<Examination> {
  const diagnostics = await query(() => store.diagnostics());
  const schema = diagnostics.integrity.ok ? await query(() => store.schemaState()) : NO_SCHEMA;
  const readable = diagnostics.integrity.ok && schema.applied > 0;
  const read = <T>(work: () => Promise<T>, none: T) => (readable ? query(work) : Promise.resolve(none));
  return {
    diagnostics,
    schema,
    armed: await read(() => armedCountdowns(store.reader), []),
    unsettled: await read(() => unsettledInjections(store.reader), []),
    stopped: (await read(() => stoppedSessions(store.reader), [])).length,
    replicas: await read(() => store.replicas(), []),
    servers: await read(async () => (store.roster ? store.roster.list() : []), []),
    models: await read(() => billedModels(store.reader).catch(() => []), []),
    noticeChannels: channelReports(
      notices,
      await read(
        () =>
          noticeChannels(
            store.reader,
            notices.channels.map((c) => c.name),
          ).catch(() => []),
        [],
      ),
    ),
    alive: await read(
      () => store.liveness(),
      () => false,
    ),
  };
}

function schemaFinding(schema: SchemaState): Finding {
  if (schema.newer)
    return {
      level: "fail",
      check: "schema",
      message: `migrated by a newer version (${schema.applied} applied, ${schema.shipped} shipped here): upgrade todo-continuation`,
    };
  if (schema.pending > 0)
    return {
      level: "warn",
      check: "schema",
      message: `${schema.pending} migration(s) pending: applied at the next plugin start or by \`todo-continuation migrate\``,
    };
  return { level: "ok", check: "schema", message: `${schema.applied}/${schema.shipped} migrations applied` };
}

function livenessFindings({ replicas, servers }: Examination): Finding[] {
  const findings: Finding[] = [];
  const dead = replicas.filter((r) => !r.alive);
  if (replicas.length > 0)
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
  return findings;
}

function findingsOf(x: Examination, now: number): Finding[] {
  const { integrity, checkedBy } = x.diagnostics;
  const findings: Finding[] = [
    integrity.ok
      ? {
          level: "ok",
          check: "integrity",
          message: checkedBy === "server" ? integrity.messages[0]! : `${checkedBy}: ok`,
        }
      : { level: "fail", check: "integrity", message: `${checkedBy}: ${integrity.messages.slice(0, 5).join("; ")}` },
    schemaFinding(x.schema),
    ...livenessFindings(x),
  ];
  const late = x.armed.filter((a) => a.deadline_at < now - 60_000);
  findings.push(
    late.length > 0
      ? {
          level: "warn",
          check: "countdowns",
          message: `${late.length} armed countdown(s) more than a minute overdue (no live process owns their scope?)`,
        }
      : { level: "ok", check: "countdowns", message: `${x.armed.length} armed` },
  );
  const pending = x.unsettled.filter((u) => u.status === "pending").length;
  const unknown = x.unsettled.filter((u) => u.status === "unknown").length;
  findings.push(
    pending + unknown > 0
      ? {
          level: "warn",
          check: "injections",
          message: `${pending} pending, ${unknown} unknown (lost in a crash; the session was evaluated again)`,
        }
      : { level: "ok", check: "injections", message: "none pending or unknown" },
  );
  const prices = priceFinding(x.models);
  if (prices) findings.push(prices);
  return findings;
}

/** Local models report no price: their continuations cost 0, and only the token budget can stop them. */
function priceFinding(models: ModelPricing[]): Finding | undefined {
  if (models.length === 0) return undefined;
  const unpriced = models.filter((m) => !m.priced);
  if (unpriced.length === 0)
    return { level: "ok", check: "prices", message: `${models.length} billed model(s), each priced` };
  const names = unpriced.map((m) => `${m.provider_id ?? "?"}/${m.model_id ?? "?"}`).join(", ");
  return {
    level: "warn",
    check: "prices",
    message:
      `no price for ${names}: maxContinuationCost and dailyContinuationCost cannot apply to its continuations ` +
      `(maxContinuationTokens still does); a price goes in opencode.json, provider.<id>.models.<id>.cost`,
  };
}

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

/** Doctor with no database file to look into: the plugin's findings and why the file is not there. Exit 1. */
function reportWithoutDatabase(
  plugin: PluginExamination,
  notices: NoticeSetup,
  missing: Finding,
  json: boolean | undefined,
): void {
  const channels = channelReports(notices, []);
  const findings = [...plugin.findings, ...noticeFindings(notices, channels, plugin.status), missing];
  if (json)
    printJson(snakeCased({ plugin: pluginJson(plugin), notifications: noticesJson(notices, channels), findings }));
  else {
    print(findingsTable(findings));
    printOptions(plugin);
  }
  process.exitCode = 1;
}

export async function doctor(directory: string, { db, json }: GlobalOptions): Promise<void> {
  const examined = examinePlugin(resolve(directory));
  const notices = noticeSetup(examined.directory, examined.status, examined.files);
  // Doctor shows the options the plugin runs with: the notify channels' without their URLs' paths and secrets.
  const plugin = { ...examined, status: statusWithoutSecrets(examined.status) };
  const location = databasePath(db);
  const path = shownLocation(location);
  if (!isPostgresUrl(location) && !existsSync(location))
    return reportWithoutDatabase(plugin, notices, missingDatabase(path, plugin), json);
  const store = await openForReading(location);
  const now = Date.now();
  let findings: Finding[];
  try {
    const x = await examine(store, notices);
    findings = [...plugin.findings, ...findingsOf(x, now), ...noticeFindings(notices, x.noticeChannels, plugin.status)];
    const { diagnostics: d } = x;
    if (json)
      printJson(
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
    else {
      printHeader(path, x);
      printTables(x, findings, now);
      printOptions(plugin);
    }
  } finally {
    await store.close();
  }
  if (findings.some((f) => f.level === "fail")) process.exitCode = 1;
}
