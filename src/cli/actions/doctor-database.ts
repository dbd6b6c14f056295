// `doctor`'s look into the database: what it reads there (integrity, schema, who is alive, the fleet's servers,
// countdowns and continuations that look stuck, the billed models' prices, each notify channel's deliveries) and what
// it finds wrong with it.
import type { Diagnostics, OperatorStore, ReplicaState, SchemaState } from "../../store/operator/operator.js";
import type { ServerState } from "../../store/operator/roster.js";
import { noticeChannels } from "../../store/notices/queries.js";
import { ownerMayBeAlive } from "../../store/owner.js";
import {
  armedCountdowns,
  billedModels,
  stoppedSessions,
  unfinishedChecks,
  unsettledInjections,
  type ArmedRow,
  type UnfinishedCheckRow,
  type ModelPricing,
  type UnsettledRow,
} from "../../store/operator/queries.js";
import { query } from "../database.js";
import { duration } from "../format.js";
import { channelReports, type ChannelReport, type NoticeSetup } from "./doctor-notices.js";
import type { PluginFinding as Finding } from "./doctor-plugin.js";

/** What doctor read from the database. */
export interface Examination {
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
  /** Checks of finished lists in the last day that could not start or did not finish. */
  unfinishedChecks: UnfinishedCheckRow[];
}

const NO_SCHEMA: SchemaState = {
  shipped: 0,
  applied: 0,
  latestShipped: null,
  latestApplied: null,
  pending: 0,
  newer: false,
};

export async function examine(store: OperatorStore, notices: NoticeSetup): Promise<Examination> {
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
    unfinishedChecks: await read(() => unfinishedChecks(store.reader, Date.now() - DAY_MS).catch(() => []), []),
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
  // A process of this host whose pid is gone ended, whatever its heartbeat says: `opencode serve` exits on SIGTERM
  // without stopping its plugins, so a clean stop of OpenCode leaves its row, which the next start here removes.
  const ended = replicas.filter((r) => !ownerMayBeAlive(r.id));
  const silent = replicas.filter((r) => !r.alive && ownerMayBeAlive(r.id));
  const alive = replicas.length - ended.length - silent.length;
  if (silent.length > 0)
    findings.push({
      level: "warn",
      check: "replicas",
      message: `${silent.length} of ${replicas.length} without a fresh heartbeat (their countdowns are adopted by the others)`,
    });
  else if (alive > 0) findings.push({ level: "ok", check: "replicas", message: `${alive} alive` });
  if (ended.length > 0)
    findings.push({
      level: "ok",
      check: "replicas",
      message:
        `${ended.length} ended (${ended.map((r) => `pid ${r.pid}`).join(", ")}: gone from this host, as when OpenCode ` +
        "was stopped, which does not stop its plugins): the next OpenCode here removes their rows and takes their countdowns",
    });
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

export function findingsOf(x: Examination, now: number): Finding[] {
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
  findings.push(...x.unfinishedChecks.map((row) => unfinishedCheckFinding(row, now)));
  const prices = priceFinding(x.models);
  if (prices) findings.push(prices);
  return findings;
}

const DAY_MS = 86_400_000;

/** A check that could not start or ran out of time, said plainly: the command, the session, when, its last line. */
function unfinishedCheckFinding(row: UnfinishedCheckRow, now: number): Finding {
  let detail: { command?: unknown; output?: unknown } = {};
  try {
    detail = JSON.parse(row.detail ?? "{}") as typeof detail;
  } catch {
    // A detail that is not JSON leaves the reason to speak.
  }
  const command = typeof detail.command === "string" ? JSON.stringify(detail.command) : "the verify command";
  const what = row.reason === "timeout" ? "ran out of time" : "could not start";
  const said = typeof detail.output === "string" ? detail.output.trimEnd().split("\n").at(-1) : undefined;
  return {
    level: "warn",
    check: "verify",
    message:
      `${command} ${what} in ${row.session_id ?? "a session"} ${duration(now - row.at)} ago` +
      (said ? `: ${said}` : "") +
      " (never counted as passed; fix the command or its timeoutSeconds)",
  };
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
