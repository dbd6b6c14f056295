// 3. Scheduler precision: N armed countdowns with deadlines spread over three seconds, all waited for by the one
// TimerQueue; lateness of each firing against its deadline.
import { systemClock } from "../src/engine/clock.js";
import { CountdownScheduler } from "../src/engine/scheduler.js";
import { TimerQueue } from "../src/engine/timer-queue.js";
import type { CountdownRow } from "../src/store/schema.js";
import { percentiles, type Figure } from "./lib.js";

export async function schedulerPrecision(count: number): Promise<Figure[]> {
  const timers = new TimerQueue(systemClock);
  const lateness: number[] = [];
  const due = new Map<string, number>();
  let done: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const scheduler = new CountdownScheduler({
    repo: undefined as never,
    timers,
    clock: systemClock,
    owner: "bench",
    directory: "/bench",
    leaseMs: 15_000,
    resumeWindowMs: 60_000,
    onDue: (row) => {
      lateness.push(performance.now() - due.get(row.id)!);
      if (lateness.length === count) done();
    },
    onAdopted: () => undefined,
    isHeld: () => false,
    onError: () => undefined,
  });
  const now = Date.now();
  for (let i = 0; i < count; i++) {
    const offset = 500 + Math.random() * 3000;
    const row = {
      id: `cd_${i}`,
      sessionId: `ses_${i}`,
      directory: "/bench",
      armedAt: now,
      deadlineAt: now + offset,
      state: "armed",
    } as CountdownRow;
    due.set(row.id, performance.now() + (row.deadlineAt - Date.now()));
    scheduler.track(row);
  }
  // The TimerQueue's timer is unref'd (it must not keep a CLI alive): hold the process open while waiting.
  const keepAlive = setInterval(() => undefined, 1000);
  await finished;
  clearInterval(keepAlive);
  timers.stop();
  const p = percentiles(lateness);
  return [
    {
      group: "scheduler precision",
      name: `lateness with ${count.toLocaleString("en")} armed`,
      median: p.p50,
      low: p.p99,
      high: p.max,
      unit: "ms (p50; p99, max)",
      target: count >= 10_000 ? "p99 ≤ 10 ms" : undefined,
      met: count >= 10_000 ? p.p99 <= 10 : undefined,
      note: `p99 ${p.p99.toFixed(2)} ms, max ${p.max.toFixed(2)} ms`,
    },
  ];
}
