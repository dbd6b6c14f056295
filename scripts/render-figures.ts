// `npm run docs:figures`: the figures of the last `npm run bench` (bench-results/latest.json) rendered into the docs,
// so that the docs never carry a figure the latest run did not measure. It writes the latest-figures table of
// docs/performance.md and the one-line summary of README.md between their markers; `--check` only says whether they
// are what latest.json renders to (test/docs/figures.test.ts asserts the same).
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Figure } from "../bench/lib.js";
import { replaceBetweenMarkers } from "./markers.js";

export const ROOT = resolve(import.meta.dirname, "..");
export const LATEST = "bench-results/latest.json";

export interface BenchResults {
  machine: { node: string; cpus: number; cpu?: string; at: string };
  figures: Figure[];
}

/** Where each rendering goes: the file, and the markers it sits between. */
export const TARGETS = {
  table: { file: "docs/performance.md", markers: "figures" },
  summary: { file: "README.md", markers: "figures:summary" },
} as const;

/** The steps of `npm run bench` (bench/run.ts), each told by the groups of the figures it writes. */
const STEPS: [step: string, group: RegExp][] = [
  ["hot-path", /^hot path \(node/],
  ["state-changes", /^state changes \(node/],
  ["pg-state-changes", /^state changes \(PostgreSQL/],
  ["bills", /^bills \(node/],
  ["scheduler", /^scheduler/],
  ["recovery", /^restart recovery/],
  ["fanout", /^fan-out/],
  ["per-continuation", /^per continuation/],
  ["memory", /^memory/],
  ["bun", /\(bun /],
  ["tui-startup", /^tui start-up/],
];

// Digits by size, as bench/run.ts prints them.
const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2));
const cell = (text: string) => text.replaceAll("|", "\\|");
const day = (iso: string) => iso.slice(0, 10);
const minute = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

export function readLatest(root = ROOT): BenchResults {
  return JSON.parse(readFileSync(join(root, LATEST), "utf8")) as BenchResults;
}

/** The steps the run left out (`npm run bench -- <step>…` runs only some). */
export function missingSteps(results: BenchResults): string[] {
  return STEPS.filter(([, group]) => !results.figures.some((f) => group.test(f.group))).map(([step]) => step);
}

function whence(results: BenchResults): string {
  const { machine } = results;
  const cpu = machine.cpu ? `, ${machine.cpu}` : "";
  return `Node ${machine.node}, ${machine.cpus} cores${cpu}`;
}

/** The latest-figures table of docs/performance.md, with the run it comes from. */
export function renderTable(results: BenchResults): string {
  const missing = missingSteps(results);
  const lines = [
    `From \`npm run bench\` on ${minute(results.machine.at)} (${whence(results)}), as written to \`${LATEST}\`.` +
      (missing.length ? ` Not in this run: ${missing.map((s) => `\`${s}\``).join(", ")}.` : ""),
    "",
    "| figure | median | spread | ratio | target | met | note |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const f of results.figures) {
    const spread = f.low !== undefined && f.high !== undefined ? `${fmt(f.low)}–${fmt(f.high)}` : "";
    const ratio = f.ratio ? `${f.ratio.value.toFixed(2)}× ${f.ratio.of}` : "";
    const met = f.met === undefined ? "" : f.met ? "yes" : "**no**";
    const row = [
      `${f.group} · ${f.name}`,
      `${fmt(f.median)} ${f.unit}`,
      spread,
      ratio,
      f.target ?? "",
      met,
      f.note ?? "",
    ];
    lines.push(`| ${row.map(cell).join(" | ")} |`);
  }
  return lines.join("\n");
}

/** README's one line: the figures people ask about first, each only if the run measured it. */
export function renderSummary(results: BenchResults): string {
  const find = (group: RegExp, name: string) => results.figures.find((f) => group.test(f.group) && f.name === name);
  const times = (f: Figure) => (f.ratio ? `${f.ratio.value.toFixed(2)}×` : "");
  const clauses: string[] = [];
  const event = find(/^hot path \(node/, "delta, nothing armed");
  const sql = find(/^hot path \(node/, "SQL statements per 100k streaming events");
  if (event) {
    const statements =
      sql === undefined
        ? ""
        : sql.median === 0
          ? " and runs no SQL"
          : ` and runs ${sql.median} SQL statements per 100,000`;
    clauses.push(
      `a streamed event costs ${fmt(event.median)} ns, ${times(event)} a hook that only looks at it,${statements}`,
    );
  }
  const arm = find(/^state changes \(node/, "arm a countdown");
  const pgArm = find(/^state changes \(PostgreSQL/, "arm a countdown");
  const arms: string[] = [];
  if (arm) arms.push(`${fmt(arm.median)} µs on SQLite, ${times(arm)} the same rows written raw`);
  if (pgArm) {
    const version = /PostgreSQL ([0-9.]+)/.exec(pgArm.group)?.[1] ?? "";
    arms.push(
      `${fmt(pgArm.median)} µs on PostgreSQL ${version} (loopback, fsync on), ${times(pgArm)} the same rows written by hand`,
    );
  }
  if (arms.length) clauses.push(`arming a countdown is one transaction: ${arms.join(", and ")}`);
  const tui = find(/^tui start-up/, "the plugin's load and tui(), over an empty module");
  if (tui) clauses.push(`the TUI plugin adds ${fmt(tui.median)} ms to OpenCode's TUI start over an empty plugin`);
  const targets = results.figures.filter((f) => f.met !== undefined);
  const met = targets.filter((f) => f.met).length;
  const missed = targets.filter((f) => !f.met).map((f) => `${f.group} · ${f.name}`);
  const partial = missingSteps(results).length ? " (a partial run)" : "";
  const said = clauses.length ? `${clauses.join("; ")}; ` : "";
  return (
    `Latest \`npm run bench\`${partial}, ${day(results.machine.at)}, ${whence(results)}: ${said}` +
    `${met} of ${targets.length} targets met${missed.length ? ` (missed: ${missed.join("; ")})` : ""}. ` +
    `Every figure, its target and the method: ` +
    `[docs/performance.md](docs/performance.md).`
  );
}

/** What each target's block should hold, given latest.json. */
export function rendered(results: BenchResults): Record<keyof typeof TARGETS, string> {
  return { table: renderTable(results), summary: renderSummary(results) };
}

function main(check: boolean): number {
  const results = readLatest();
  const bodies = rendered(results);
  let stale = 0;
  for (const key of Object.keys(TARGETS) as (keyof typeof TARGETS)[]) {
    const { file, markers } = TARGETS[key];
    const path = join(ROOT, file);
    const text = readFileSync(path, "utf8");
    const next = replaceBetweenMarkers(text, markers, bodies[key]);
    if (next === text) continue;
    stale++;
    if (check) console.error(`${file}: the figures are not what ${LATEST} renders to (npm run docs:figures)`);
    else {
      writeFileSync(path, next);
      console.log(`${file}: figures rendered from ${LATEST}`);
    }
  }
  return check && stale ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.exitCode = main(process.argv.includes("--check"));
