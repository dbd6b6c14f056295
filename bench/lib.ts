// Shared pieces of the benchmark suite: figures, batched timing with tinybench, percentiles, a scratch database.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Bench } from "tinybench";

export interface Figure {
  group: string;
  name: string;
  /** The median, in `unit`. */
  median: number;
  /** Spread: 25th and 75th percentiles of the samples (or p99/max where noted). */
  low?: number;
  high?: number;
  unit: string;
  /** A ratio measured in the same run, e.g. against the floor. */
  ratio?: { of: string; value: number };
  target?: string;
  met?: boolean;
  note?: string;
}

export const runtime =
  typeof (process.versions as Record<string, string | undefined>).bun === "string"
    ? `bun ${process.versions.bun}`
    : `node ${process.versions.node}`;

/**
 * Nanoseconds per call of each task, each sample the mean of `batch` calls (a single call is too short to time).
 * All tasks run in one tinybench run, so their ratios come from the same conditions.
 */
export async function nsPerCall(tasks: Record<string, () => void>, options: { batch?: number; timeMs?: number } = {}) {
  const batch = options.batch ?? 1000;
  const bench = new Bench({ time: options.timeMs ?? 600, warmupTime: 150, retainSamples: true });
  for (const [name, fn] of Object.entries(tasks)) {
    bench.add(name, () => {
      const started = bench.now();
      for (let i = 0; i < batch; i++) fn();
      const elapsed = bench.now() - started;
      return { overriddenDuration: elapsed / batch, overriddenIterationCost: elapsed };
    });
  }
  await bench.run();
  const out: Record<string, { median: number; p25: number; p75: number }> = {};
  for (const task of bench.tasks) {
    const latency = (task.result as { latency?: { p50: number; samples?: number[] } } | undefined)?.latency;
    if (!latency) throw new Error(`benchmark ${task.name} produced no result`);
    const samples = [...(latency.samples ?? [])].sort((a, b) => a - b);
    const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]! * 1e6;
    out[task.name] = { median: latency.p50 * 1e6, p25: at(0.25), p75: at(0.75) };
  }
  return out;
}

export interface Sampled {
  /** Median and spread (25th–75th percentile) of the samples: nanoseconds per call for `interleaved`. */
  median: number;
  p25: number;
  p75: number;
  samples: number[];
}

/**
 * Tasks measured interleaved: each round times one batch of every task, in an order that rotates from round to round,
 * so that a machine that gets busy slows the task and its floor alike. A ratio is then the median of the per-round
 * ratios (see `ratioOf`), which holds on a loaded machine where absolute figures do not. A task may be asynchronous
 * (awaited call by call): what it costs to be awaited is part of what it costs.
 */
export async function interleaved(
  tasks: Record<string, () => void | Promise<void>>,
  options: { rounds?: number; batch?: number; warmupRounds?: number } = {},
): Promise<Record<string, Sampled>> {
  const rounds = options.rounds ?? 40;
  const batch = options.batch ?? 1000;
  const warmup = options.warmupRounds ?? 3;
  const names = Object.keys(tasks);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < warmup + rounds; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length]!;
      const fn = tasks[name]!;
      const started = performance.now();
      for (let i = 0; i < batch; i++) {
        const result = fn();
        if (result) await result;
      }
      const ns = ((performance.now() - started) * 1e6) / batch;
      if (round >= warmup) samples[name]!.push(ns);
    }
  }
  return Object.fromEntries(names.map((name) => [name, summarize(samples[name]!)]));
}

/** Median and spread of samples kept in the order they were taken (`ratioOf` pairs them round by round). */
export function summarize(samples: number[]): Sampled {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { median: at(0.5), p25: at(0.25), p75: at(0.75), samples };
}

/** The median over rounds of task ÷ floor, each pair measured back to back in the same round. */
export function ratioOf(task: Sampled, floor: Sampled): number {
  const ratios = task.samples.map((ns, i) => ns / floor.samples[i]!).sort((a, b) => a - b);
  return ratios[Math.floor(ratios.length / 2)]!;
}

export function percentiles(values: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1)! };
}

export function scratch(prefix = "tc-bench-"): { dir: string; db: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, db: join(dir, "state.db"), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
