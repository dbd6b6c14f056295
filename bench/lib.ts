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
