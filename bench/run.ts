// `npm run bench`: every benchmark, one table, and the same figures as JSON in bench-results/latest.json.
// Medians with their spread; each ratio is measured in the same run as its reference.
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { startProcess } from "../test/crash/processes.js";
import { bills } from "./bills.js";
import { dashboard } from "./dashboard.js";
import { fanout } from "./fanout.js";
import { hotPath } from "./hot-path.js";
import { notices } from "./notices.js";
import { perContinuation } from "./per-continuation.js";
import type { Figure } from "./lib.js";
import { recovery } from "./recovery.js";
import { schedulerPrecision } from "./scheduler.js";
import { pgStateChanges } from "./pg-state-changes.js";
import { stateChanges } from "./state-changes.js";
import { tuiStartup } from "./tui-startup.js";

const only = process.argv.slice(2);
const want = (name: string) => only.length === 0 || only.includes(name);
const figures: Figure[] = [];
const step = async (name: string, run: () => Promise<Figure[]>) => {
  if (!want(name)) return;
  process.stderr.write(`running ${name}…\n`);
  figures.push(...(await run()));
};

async function inChild(runtime: "node" | "bun", script: string, env: Record<string, string> = {}): Promise<Figure[]> {
  const child = startProcess(runtime, `../../bench/${script}`, env);
  const line = (await child.waitFor("figures", 900_000)) as { figures: Figure[] };
  return line.figures;
}

await step("hot-path", hotPath);
await step("state-changes", stateChanges);
await step("pg-state-changes", pgStateChanges);
await step("bills", bills);
await step("notices", notices);
await step("scheduler", async () => [...(await schedulerPrecision(1000)), ...(await schedulerPrecision(10_000))]);
// Recovery: 20 rounds at 10k armed, 7 at 100k (a round there takes about 5 s), and 10 at 10k armed beside 100k parked
// sessions; about a minute and a half in all.
await step("recovery", async () => [
  ...(await recovery(10_000, 1_000_000, 20)),
  ...(await recovery(100_000, 1_000_000, 7)),
  ...(await recovery(10_000, 1_000_000, 10, 100_000)),
]);
await step("fanout", () => fanout(1000, 8, 20));
// 200 sessions continued three times each, to their last todo (issue 51's per-continuation targets).
await step("per-continuation", () => perContinuation(200));
// The page at 50,000 sessions and 1,000,000 audit rows: its first screen and a session's page, and its feed at rest.
await step("dashboard", () => dashboard(15));
await step("memory", () => inChild("node", "memory.ts", { NODE_OPTIONS: "--expose-gc" }));
await step("bun", () => inChild("bun", "bun.ts"));
// OpenCode's TUI started 7 times with the TUI plugin and 7 without, plus a warm-up start of each
// (BENCH_TUI_STARTS=n for another count).
await step("tui-startup", () => tuiStartup(Number(process.env.BENCH_TUI_STARTS ?? 7)));

// Digits by size, a difference below zero as well (the TUI plugin's added start-up time may be).
const fmt = (n: number | undefined) =>
  n === undefined ? "" : Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2);
const rows = figures.map((f) => ({
  figure: `${f.group} · ${f.name}`,
  median: `${fmt(f.median)} ${f.unit}`,
  spread: f.low !== undefined ? `${fmt(f.low)}–${fmt(f.high)}` : "",
  ratio: f.ratio ? `${f.ratio.value.toFixed(2)}× ${f.ratio.of}` : "",
  target: f.target ?? "",
  met: f.met === undefined ? "" : f.met ? "yes" : "NO",
  note: f.note ?? "",
}));
const columns = ["figure", "median", "spread", "ratio", "target", "met", "note"] as const;
const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => r[c].length)));
const line = (values: string[]) =>
  values
    .map((v, i) => v.padEnd(widths[i]!))
    .join("  ")
    .trimEnd();
console.log(line(columns.map((c) => c.toUpperCase())));
for (const r of rows) console.log(line(columns.map((c) => r[c])));

const machine = {
  node: process.versions.node,
  cpus: cpus().length,
  cpu: cpus()[0]?.model,
  at: new Date().toISOString(),
};
mkdirSync("bench-results", { recursive: true });
writeFileSync(join("bench-results", "latest.json"), `${JSON.stringify({ machine, figures }, null, 2)}\n`);
console.log(`\n${figures.length} figures; JSON in bench-results/latest.json (${machine.cpus} cores, ${machine.cpu})`);
