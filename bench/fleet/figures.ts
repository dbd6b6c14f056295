// The figures of one size from what the window measured: the database's statements and transactions (summed over the
// segments a restart splits them into), the replicas' metrics, CPU and memory, the simulated servers' and PostgreSQL's
// CPU, and the machine's.
import type { DatabaseCounters, StatementCount } from "./database.js";
import { buckets, difference, quantile, total, type Scrape } from "./metrics.js";
import { CLOCK_TICKS } from "./processes.js";
import type { Replica, ReplicaSnapshot } from "./replicas.js";

export interface StatementFigure {
  query: string;
  calls: number;
  perContinuation: number;
  totalMs: number;
  msPerContinuation: number;
  meanMs: number;
}

/** The database's work over the window: `segments` are [start, end] pairs of counters of one postmaster each. */
export function databaseFigures(segments: Array<[DatabaseCounters, DatabaseCounters]>, seconds: number, n: number) {
  const statements = new Map<string, StatementCount>();
  let transactions = 0;
  let cpuTicks = 0;
  for (const [from, to] of segments) {
    transactions += to.transactions - from.transactions;
    cpuTicks += to.cpuTicks - from.cpuTicks;
    for (const [id, s] of to.statements) {
      const before = from.statements.get(id);
      const sum = statements.get(id) ?? { query: s.query, calls: 0, totalMs: 0, rows: 0 };
      sum.calls += s.calls - (before?.calls ?? 0);
      sum.totalMs += s.totalMs - (before?.totalMs ?? 0);
      sum.rows += s.rows - (before?.rows ?? 0);
      statements.set(id, sum);
    }
  }
  const all = [...statements.values()].filter((s) => s.calls > 0);
  const calls = all.reduce((sum, s) => sum + s.calls, 0);
  const per = (value: number) => (n > 0 ? value / n : null);
  const figure = (s: StatementCount): StatementFigure => ({
    query: s.query.replace(/\s+/g, " ").slice(0, 400),
    calls: s.calls,
    perContinuation: per(s.calls) ?? 0,
    totalMs: Math.round(s.totalMs),
    msPerContinuation: per(s.totalMs) ?? 0,
    meanMs: s.totalMs / s.calls,
  });
  return {
    statements: calls,
    statementsPerSecond: calls / seconds,
    statementsPerContinuation: per(calls),
    transactions,
    transactionsPerSecond: transactions / seconds,
    transactionsPerContinuation: per(transactions),
    executionMsPerContinuation: per(all.reduce((sum, s) => sum + s.totalMs, 0)),
    cpuCores: cpuTicks / CLOCK_TICKS / seconds,
    topByCalls: [...all]
      .sort((a, b) => b.calls - a.calls)
      .slice(0, 12)
      .map(figure),
    topByTime: [...all]
      .sort((a, b) => b.totalMs - a.totalMs)
      .slice(0, 12)
      .map(figure),
  };
}

export interface ReplicaFigure {
  pid: number;
  role: "steady" | "killed" | "frozen" | "successor";
  /** Servers it followed at its last snapshot (`servers_followed`). */
  serversFollowed: number;
  cpuCores: number;
  rssMB: number;
  peakRssMB: number;
  openFiles: number;
  cpuMsPerSecondPerServer: number | null;
  rssMBPerServer: number | null;
  continuations: number;
}

/** One replica over the window: from its first snapshot (or its start) to `end` (or its last before it died). */
export function replicaFigure(replica: Replica, end: ReplicaSnapshot | undefined, role: ReplicaFigure["role"]) {
  const last = end ?? replica.last;
  const from = replica.first;
  const seconds = last ? (last.at - (from?.at ?? replica.startedAt)) / 1000 : 0;
  const cpuCores = last && seconds > 0 ? (last.cpuTicks - (from?.cpuTicks ?? 0)) / CLOCK_TICKS / seconds : 0;
  const followed = last ? total(last.scrape, "todo_continuation_servers_followed") : 0;
  const window = last ? difference(last.scrape, from?.scrape) : [];
  const figure: ReplicaFigure = {
    pid: replica.pid,
    role,
    serversFollowed: followed,
    cpuCores,
    rssMB: (last?.rssBytes ?? 0) / 2 ** 20,
    peakRssMB: replica.peakRssBytes / 2 ** 20,
    openFiles: last?.openFiles ?? 0,
    cpuMsPerSecondPerServer: followed > 0 ? (cpuCores * 1000) / followed : null,
    rssMBPerServer: followed > 0 ? (last?.rssBytes ?? 0) / 2 ** 20 / followed : null,
    continuations: total(window, "todo_continuation_continuations_total", { outcome: "injected" }),
  };
  return { figure, window };
}

/** Fire lateness over the window, every replica's histogram summed: all fires, and those armed where they fired. */
export function latenessFigures(windows: Scrape[]) {
  const name = "todo_continuation_fire_lateness_seconds";
  const armedHere = windows.map((w) => w.filter((s) => s.labels.resumed === undefined || s.labels.resumed === ""));
  const all = buckets(windows, name);
  const here = buckets(armedHere, name);
  return {
    fires: all.at(-1)?.count ?? 0,
    p50Seconds: quantile(0.5, all),
    p99Seconds: quantile(0.99, all),
    armedHereP50Seconds: quantile(0.5, here),
    armedHereP99Seconds: quantile(0.99, here),
  };
}

/** Per store operation over the window, every replica summed: calls and mean seconds. */
export function storeOperations(windows: Scrape[]): Record<string, { calls: number; meanMs: number }> {
  const calls = new Map<string, number>();
  const seconds = new Map<string, number>();
  for (const w of windows)
    for (const s of w) {
      const op = s.labels.operation;
      if (!op) continue;
      if (s.name === "todo_continuation_store_seconds_count") calls.set(op, (calls.get(op) ?? 0) + s.value);
      if (s.name === "todo_continuation_store_seconds_sum") seconds.set(op, (seconds.get(op) ?? 0) + s.value);
    }
  return Object.fromEntries(
    [...calls]
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([op, n]) => [op, { calls: n, meanMs: ((seconds.get(op) ?? 0) * 1000) / n }]),
  );
}

export function percentilesOf(values: number[]): { n: number; min: number; p50: number; max: number } | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return { n: sorted.length, min: sorted[0]!, p50: sorted[Math.floor(sorted.length / 2)]!, max: sorted.at(-1)! };
}
