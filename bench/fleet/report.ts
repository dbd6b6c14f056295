// One size's result, as bench-results/fleet.json keeps it: the figures of the window, the takeovers, the verdict
// (lost and doubled, from the simulated servers and from the rows), and what limited the run.
import { cpus } from "node:os";
import {
  databaseFigures,
  latenessFigures,
  percentilesOf,
  replicaFigure,
  storeOperations,
  type ReplicaFigure,
} from "./figures.js";
import type { Scrape } from "./metrics.js";
import { CLOCK_TICKS, openFilesLimit } from "./processes.js";
import { adoptedFrom, auditCounts, doubledInRows, firedLateness, injectedBetween, suspects } from "./rows.js";
import type { Drained, Measured, SizeRun } from "./size-run.js";
import type { Takeover } from "./faults.js";

const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);

function replicaFigures(run: SizeRun, m: Measured): { figures: ReplicaFigure[]; windows: Scrape[] } {
  const figures: ReplicaFigure[] = [];
  const windows: Scrape[] = [];
  for (const replica of run.replicas) {
    const role = replica.pid === m.kill?.pid ? "killed" : replica.pid === m.freeze?.pid ? "frozen" : "steady";
    const successor = replica.pid === m.kill?.successor;
    const { figure, window } = replicaFigure(replica, m.ends.get(replica), successor ? "successor" : role);
    figures.push(figure);
    windows.push(window);
  }
  return { figures, windows };
}

/** What following every server costs with no session busy: the database's load and the replicas' CPU and memory. */
function idleFigures(run: SizeRun) {
  const idle = run.idle!;
  const db = databaseFigures([idle.db], idle.seconds, 0);
  const replicaCores = idle.replicaCpuTicks.reduce((a, b) => a + b, 0) / CLOCK_TICKS / idle.seconds;
  const { servers, replicas } = run.size;
  return {
    seconds: idle.seconds,
    statementsPerSecond: db.statementsPerSecond,
    transactionsPerSecond: db.transactionsPerSecond,
    statementsPerSecondPerServer: db.statementsPerSecond / servers,
    postgresCores: db.cpuCores,
    replicasCores: replicaCores,
    replicaCpuMsPerSecondPerServer: (replicaCores * 1000) / servers,
    replicaRssMB: mean(idle.replicaRssBytes) / 2 ** 20,
    replicaRssMBPerServer: mean(idle.replicaRssBytes) / 2 ** 20 / (servers / Math.min(servers, replicas)),
    simCores: idle.simCpuTicks / CLOCK_TICKS / idle.seconds,
    topByCalls: db.topByCalls.slice(0, 8),
  };
}

/**
 * How a faulted replica's countdowns fared with their adopters, in ms after the fault: those adopted from `until`
 * on were not taken over (a frozen replica that woke hands its servers back, and they are adopted again).
 */
async function adoption(run: SizeRun, takeover: Takeover | undefined, until: number) {
  if (!takeover) return undefined;
  const all = await adoptedFrom(run.db, takeover.owner, takeover.at);
  const rows = all.filter((r) => r.adoptedMs >= 0 && r.adoptedMs < until - takeover.at);
  const fired = rows.filter((r) => r.ended === "fired");
  const endings: Record<string, number> = {};
  for (const r of rows) endings[r.ended ?? "open"] = (endings[r.ended ?? "open"] ?? 0) + 1;
  return {
    ...takeover,
    adopted: rows.length,
    endings,
    adoptedMs: percentilesOf(rows.map((r) => r.adoptedMs)),
    dueMs: percentilesOf(fired.map((r) => r.dueMs!)),
    firedMs: percentilesOf(fired.map((r) => r.endedMs!)),
  };
}

async function figuresOf(run: SizeRun, m: Measured, drained: Drained) {
  const seconds = (m.t1 - m.t0) / 1000;
  const continuations = await injectedBetween(run.db, m.t0, m.t1);
  const { figures: replicas, windows } = replicaFigures(run, m);
  // Those that ran the whole window untouched; with too few replicas for that, every one that was not killed.
  const untouched = replicas.filter((r) => r.role === "steady");
  const steady = untouched.length ? untouched : replicas.filter((r) => r.role !== "killed");
  const database = databaseFigures(m.segments, seconds, continuations);
  const idle = idleFigures(run);
  const beyondIdle = (count: number, perSecond: number) =>
    continuations > 0 ? (count - perSecond * seconds) / continuations : null;
  const dbLateness = (await firedLateness(run.db, m.t0, m.t1)).map((r) => r.lateMs).sort((a, b) => a - b);
  const at = (q: number) => (dbLateness.length ? dbLateness[Math.floor(q * (dbLateness.length - 1))]! / 1000 : null);
  const rows = await doubledInRows(run.db, run.settings.todos);
  const { stats } = drained;
  // Unfinished sessions are lost once the fleet is at rest; while it still works they are a capacity limit.
  const lost = drained.ended === "still working" ? 0 : stats.unfinished;
  const verdict = {
    lost,
    stillWorking: stats.unfinished - lost,
    drainEnded: drained.ended,
    doubled: stats.doubled + stats.afterDone + rows.countdownsInjectedTwice + rows.sessionsOverContinued,
    simUnfinished: stats.unfinished,
    simBusy: stats.busy,
    simDoubled: stats.doubled,
    simAfterDone: stats.afterDone,
    promptsPerSession: stats.promptsPerSession,
    ...rows,
    atRest: drained.rest,
    drainSeconds: drained.seconds,
    suspects:
      stats.unfinished > 0 || stats.doubled + stats.afterDone > 0
        ? await suspects(run.db, run.settings.todos, m.t0, stats.unfinishedIds)
        : [],
  };
  const busyCores = ((m.machine.total - m.machine.idle) / m.machine.total) * cpus().length;
  const replicaCores = replicas.reduce((sum, r) => sum + r.cpuCores, 0);
  const simCores = m.simCpuTicks / CLOCK_TICKS / seconds;
  const offered = (run.settings.todos * run.size.sessions) / (run.staggerMs / 1000);
  const result = {
    size: { ...run.size, sessionsPerServer: run.sessionsPerServer },
    window: { seconds, from: new Date(m.t0).toISOString() },
    startup: run.startup,
    throughput: {
      continuations,
      continuationsPerSecond: continuations / seconds,
      offeredPerSecond: offered,
      simPromptsPerSecond: (m.simTo.prompts - m.simFrom.prompts) / seconds,
    },
    lateness: { ...latenessFigures(windows), fromRows: { fires: dbLateness.length, p50: at(0.5), p99: at(0.99) } },
    database: {
      ...database,
      statementsPerContinuationBeyondIdle: beyondIdle(database.statements, idle.statementsPerSecond),
      transactionsPerContinuationBeyondIdle: beyondIdle(database.transactions, idle.transactionsPerSecond),
    },
    idle,
    replicas,
    perReplica: {
      measured: steady.map((r) => r.role),
      serversFollowed: mean(steady.map((r) => r.serversFollowed)),
      cpuCores: mean(steady.map((r) => r.cpuCores)),
      rssMB: mean(steady.map((r) => r.rssMB)),
      peakRssMB: Math.max(0, ...replicas.map((r) => r.peakRssMB)),
      openFiles: Math.max(0, ...replicas.map((r) => r.openFiles)),
      cpuMsPerSecondPerServer: mean(steady.flatMap((r) => r.cpuMsPerSecondPerServer ?? [])),
      rssMBPerServer: mean(steady.flatMap((r) => r.rssMBPerServer ?? [])),
    },
    storeOperations: storeOperations(windows),
    sim: {
      cpuCores: simCores,
      rssMB: m.simRssBytes / 2 ** 20,
      // What the replicas asked of OpenCode and heard from it, per continuation: the HTTP calls and the events.
      requestsPerContinuation: continuations > 0 ? (m.simTo.requests - m.simFrom.requests) / continuations : null,
      eventsPerContinuation: continuations > 0 ? (m.simTo.events - m.simFrom.events) / continuations : null,
    },
    machine: { cores: cpus().length, busyCores, otherCores: busyCores - replicaCores - simCores - database.cpuCores },
    kill: await adoption(run, m.kill, m.t1),
    freeze: await adoption(run, m.freeze, m.freeze ? m.freeze.at + m.freeze.frozenMs : 0),
    restart: m.restart ? await restartFigures(run, m) : undefined,
    faultErrors: m.faultErrors,
    postgresErrors: run.db.errors(),
    verdict,
    audit: await auditCounts(run.db),
    troubles: Object.fromEntries(run.replicas.map((r) => [r.pid, r.troubles()])),
    timeline: run.timeline,
  };
  return result;
}

type Figures = Awaited<ReturnType<typeof figuresOf>>;
export type SizeResult = Figures & { limits: string[] };

/** bench-results/fleet.json: the conditions of the latest run, and every size measured (each with its own). */
export interface FleetResults {
  conditions: Record<string, unknown>;
  sizes: Array<SizeResult & { conditions: Record<string, unknown> }>;
}

export async function report(run: SizeRun, m: Measured, drained: Drained): Promise<SizeResult> {
  const figures = await figuresOf(run, m, drained);
  return { ...figures, limits: limits(figures, run) };
}

async function restartFigures(run: SizeRun, m: Measured) {
  const { stoppedAt, startedAt, downMs } = m.restart!;
  const [row] = await run.db.all<{ first: string | null }>(
    "SELECT min(at) AS first FROM audit_events WHERE event = 'injected' AND at >= ?",
    startedAt,
  );
  const first = row?.first ? Number(row.first) : null;
  return { stoppedAt, startedAt, downMs, firstContinuationAfterMs: first === null ? null : first - startedAt };
}

/** What held the run back, as far as the figures say. */
function limits(r: Figures, run: SizeRun): string[] {
  const found: string[] = [];
  const { machine, throughput } = r;
  const cores = (n: number) => n.toFixed(2);
  const replicaCores = r.replicas.reduce((sum, x) => sum + x.cpuCores, 0);
  if (machine.busyCores > 0.9 * machine.cores)
    found.push(
      `CPU: the machine's ${machine.cores} cores were ${Math.round((100 * machine.busyCores) / machine.cores)}% busy ` +
        `(replicas ${cores(replicaCores)} cores, simulated servers ${cores(r.sim.cpuCores)}, PostgreSQL ` +
        `${cores(r.database.cpuCores)}, everything else ${cores(machine.otherCores)})`,
    );
  if (throughput.continuationsPerSecond < 0.9 * throughput.offeredPerSecond)
    found.push(
      `throughput: ${throughput.continuationsPerSecond.toFixed(1)} continuations/s of the ` +
        `${throughput.offeredPerSecond.toFixed(1)}/s offered: the fleet fell behind`,
    );
  const deadlocks = r.postgresErrors["ERROR: deadlock detected"] ?? 0;
  if (deadlocks > 0) found.push(`PostgreSQL: ${deadlocks} deadlocks detected (its log)`);
  if (r.verdict.stillWorking > 0)
    found.push(
      `drain: ${r.verdict.stillWorking} sessions still unfinished after ${r.verdict.drainSeconds} s of draining`,
    );
  const fdLimit = openFilesLimit();
  if (r.perReplica.openFiles > 0.8 * fdLimit)
    found.push(`file descriptors: a replica had ${r.perReplica.openFiles} open of ${fdLimit}`);
  const lease = run.settings.leaseMs;
  for (const [name, t] of [
    ["kill", r.kill],
    ["freeze", r.freeze],
  ] as const)
    if (t && (t.takeoverMs === null || t.takeoverMs > lease + 1000))
      found.push(
        `takeover after the ${name}: ${t.takeoverMs === null ? `not done within ${3 * lease + 60_000}` : t.takeoverMs} ms ` +
          `for ${t.servers} servers (lease ${lease})`,
      );
  // The replicas' logs, every replica summed by kind: a round late or slow says a replica was starved.
  const kinds = new Map<string, { count: number; example: string }>();
  for (const troubles of Object.values(r.troubles))
    for (const [kind, t] of Object.entries(troubles)) {
      const sum = kinds.get(kind) ?? { count: 0, example: t.examples[0] ?? "" };
      sum.count += t.count;
      kinds.set(kind, sum);
    }
  for (const [kind, t] of kinds)
    if (kind !== "error lines") found.push(`replicas' logs: ${kind} ×${t.count}, e.g. "${t.example.slice(25)}"`);
  return found;
}
