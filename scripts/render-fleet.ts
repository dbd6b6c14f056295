// `npm run docs:fleet`: the fleet benchmark's results (bench-results/fleet.json, written by `npm run bench:fleet`)
// rendered into docs/capacity.md's tables and the picture docs/fleet-scaling.svg, so that the capacity page never
// carries a figure the results file does not hold. `--check` only says whether they are what fleet.json renders to
// (test/docs/fleet-figures.test.ts asserts the same).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { FleetResults } from "../bench/fleet/report.js";
import { renderSvg, short } from "./fleet-svg.js";
import { replaceBetweenMarkers } from "./markers.js";
import { ROOT } from "./render-figures.js";

export const FLEET_RESULTS = "bench-results/fleet.json";
export const CAPACITY = "docs/capacity.md";
export const PICTURE = "docs/fleet-scaling.svg";

type Size = FleetResults["sizes"][number];

export function readFleet(root = ROOT): FleetResults {
  return JSON.parse(readFileSync(join(root, FLEET_RESULTS), "utf8")) as FleetResults;
}

const n = (v: number | null | undefined, unit = "") => (v === null || v === undefined ? "–" : `${short(v)}${unit}`);
/** A figure net of the idle load: below zero when the fleet did less than idle (it stalled), which says nothing per continuation. */
const beyond = (v: number | null | undefined) => (typeof v === "number" && v < 0 ? "below idle" : n(v));
const ms = (v: number | null | undefined) => (v === null || v === undefined ? "–" : `${(v / 1000).toFixed(1)} s`);
const label = (s: Size) => `${s.size.replicas} × ${s.size.servers} × ${s.size.sessions}`;
const row = (cells: string[]) => `| ${cells.map((c) => c.replaceAll("|", "\\|")).join(" | ")} |`;

function table(head: string[], rows: string[][]): string {
  return [row(head), row(head.map(() => "---")), ...rows.map(row)].join("\n");
}

/** Throughput, lateness and the database's load, a row a size. */
function loadTable(sizes: Size[]): string {
  return table(
    [
      "replicas × servers × sessions",
      "continuations/s (offered)",
      "fire lateness p50 / p99",
      "statements/s",
      "transactions/s",
      "statements per continuation (beyond idle)",
      "transactions per continuation (beyond idle)",
      "idle statements/s per server",
    ],
    sizes.map((s) => [
      label(s),
      `${n(s.throughput.continuationsPerSecond)} (${n(s.throughput.offeredPerSecond)})`,
      `${n(s.lateness.p50Seconds, " s")} / ${n(s.lateness.p99Seconds, " s")}`,
      n(s.database.statementsPerSecond),
      n(s.database.transactionsPerSecond),
      `${n(s.database.statementsPerContinuation)} (${beyond(s.database.statementsPerContinuationBeyondIdle)})`,
      `${n(s.database.transactionsPerContinuation)} (${beyond(s.database.transactionsPerContinuationBeyondIdle)})`,
      n(s.idle.statementsPerSecondPerServer),
    ]),
  );
}

/** What one replica costs, working and idle, and what the rest of the machine did. */
function replicaTable(sizes: Size[]): string {
  return table(
    [
      "replicas × servers × sessions",
      "servers per replica",
      "replica CPU, cores (ms/s per server)",
      "idle: ms/s per server",
      "replica RSS, MB (per server)",
      "open files",
      "simulated servers, cores",
      "PostgreSQL, cores",
      "machine busy, cores",
    ],
    sizes.map((s) => [
      label(s),
      n(s.perReplica.serversFollowed),
      `${n(s.perReplica.cpuCores)} (${n(s.perReplica.cpuMsPerSecondPerServer)})`,
      n(s.idle.replicaCpuMsPerSecondPerServer),
      `${n(s.perReplica.rssMB)} (${n(s.perReplica.rssMBPerServer)})`,
      n(s.perReplica.openFiles),
      n(s.sim.cpuCores),
      n(s.database.cpuCores),
      `${n(s.machine.busyCores)} of ${s.machine.cores}`,
    ]),
  );
}

/** The faults: what the killed and the frozen replica held, how soon it was taken over; and the verdict. */
function faultTable(sizes: Size[]): string {
  const fault = (t: Size["kill"]) =>
    t
      ? `${t.servers} servers, ${t.armedAtFault} armed: taken ${ms(t.takeoverMs)}, due ${ms(t.dueMs?.p50)}, fired ${ms(t.firedMs?.p50)}`
      : "–";
  return table(
    [
      "replicas × servers × sessions",
      "lease",
      "killed (after its last heartbeat / the kill, median)",
      "frozen",
      "database down, first continuation after",
      "lost / doubled",
    ],
    sizes.map((s) => {
      const lease = (s.conditions.settings as { leaseMs: number }).leaseMs;
      const restart = s.restart ? `${ms(s.restart.downMs)}, ${ms(s.restart.firstContinuationAfterMs)}` : "–";
      const unfinished = s.verdict.stillWorking ? `; ${s.verdict.stillWorking} sessions unfinished, still working` : "";
      return [
        label(s),
        ms(lease),
        fault(s.kill),
        fault(s.freeze),
        restart,
        `${s.verdict.lost} / ${s.verdict.doubled}${unfinished}`,
      ];
    }),
  );
}

/** The statements of the largest size that cost the most per continuation: by calls, and by time. */
function statementsTable(sizes: Size[]): string {
  const largest = [...sizes].sort((a, b) => b.size.sessions - a.size.sessions)[0];
  if (!largest) return "No size measured yet.";
  const rows = (list: Size["database"]["topByCalls"]) =>
    list.slice(0, 8).map((s) => [s.query.slice(0, 110), n(s.perContinuation), n(s.msPerContinuation), n(s.meanMs)]);
  const head = ["statement (pg_stat_statements)", "calls per continuation", "ms per continuation", "mean ms"];
  return [
    `At ${label(largest)}, by calls:`,
    "",
    table(head, rows(largest.database.topByCalls)),
    "",
    "By time:",
    "",
    table(head, rows(largest.database.topByTime)),
  ].join("\n");
}

function limitsList(sizes: Size[]): string {
  return sizes.map((s) => `- ${label(s)}: ${s.limits.length ? s.limits.join("; ") : "none seen"}`).join("\n");
}

/** The settings a run was made with, in words: what every size shares, or what sets one apart. */
function settingsInWords(settings: Record<string, unknown>): string {
  const todos = Number(settings.todos);
  return (
    `window ${String(settings.seconds)} s after ${String(settings.warmupSeconds)} s of warm-up, countdown ` +
    `${String(settings.countdownSeconds)} s, turns of ${String(settings.turnMs)} ms, ${todos} ` +
    `continuation${todos === 1 ? "" : "s"} per session, ${String(settings.events)} events`
  );
}

const runOf = (c: Record<string, unknown>) =>
  `run ${String(c.at).slice(0, 16).replace("T", " ")} UTC, commit ${String(c.commit)}`;

function conditions(results: FleetResults): string {
  const c = results.conditions;
  const words = (s: Size) => settingsInWords(s.conditions.settings as Record<string, unknown>);
  // The settings most sizes were run with are said once; a size run otherwise says how, and every size its run.
  const counts = new Map<string, number>();
  for (const s of results.sizes) counts.set(words(s), (counts.get(words(s)) ?? 0) + 1);
  const common =
    [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? settingsInWords(c.settings as Record<string, unknown>);
  const each = results.sizes.map(
    (s) => `${label(s)}: ${runOf(s.conditions)}${words(s) === common ? "" : `; ${words(s)}`}`,
  );
  return (
    `From \`npm run bench:fleet\` (${FLEET_RESULTS}): Node ${String(c.node)}, ${String(c.cpus)} cores ` +
    `(${String(c.cpu)}), ${String(c.memoryGB)} GB, open-file limit ${String(c.openFilesLimit)}, PostgreSQL ` +
    `${String(c.postgres)}; ${common}.${each.length > 0 ? ` ${each.join(". ")}.` : ""}`
  );
}

/** What each block of docs/capacity.md should hold, and the picture. */
export function renderedFleet(results: FleetResults): { blocks: Record<string, string>; svg: string } {
  const sizes = results.sizes;
  return {
    blocks: {
      "fleet:conditions": conditions(results),
      "fleet:load": loadTable(sizes),
      "fleet:replicas": replicaTable(sizes),
      "fleet:faults": faultTable(sizes),
      "fleet:statements": statementsTable(sizes),
      "fleet:limits": limitsList(sizes),
    },
    svg: renderSvg(results),
  };
}

function main(check: boolean): number {
  const { blocks, svg } = renderedFleet(readFleet());
  const page = join(ROOT, CAPACITY);
  const text = readFileSync(page, "utf8");
  const next = Object.entries(blocks).reduce((t, [markers, body]) => replaceBetweenMarkers(t, markers, body), text);
  const picture = join(ROOT, PICTURE);
  let current = "";
  try {
    current = readFileSync(picture, "utf8");
  } catch {
    // not drawn yet
  }
  const stale = [next !== text && CAPACITY, current !== svg && PICTURE].filter(Boolean);
  if (check) {
    for (const file of stale) console.error(`${file}: not what ${FLEET_RESULTS} renders to (npm run docs:fleet)`);
    return stale.length ? 1 : 0;
  }
  writeFileSync(page, next);
  writeFileSync(picture, svg);
  for (const file of stale) console.log(`${file}: rendered from ${FLEET_RESULTS}`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.exitCode = main(process.argv.includes("--check"));
