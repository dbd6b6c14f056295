// 3. Scheduler precision: N countdowns with deadlines spread over three seconds, all waited for by the one TimerQueue
// (as Countdowns waits for them, one keyed entry each); lateness of each firing against its deadline.
import { systemClock } from "../src/engine/clock.js";
import { TimerQueue } from "../src/engine/timer-queue.js";
import { percentiles, type Figure } from "./lib.js";

export async function schedulerPrecision(count: number): Promise<Figure[]> {
  const timers = new TimerQueue(systemClock);
  const lateness: number[] = [];
  let done: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  for (let i = 0; i < count; i++) {
    const delayMs = 500 + Math.random() * 3000;
    const due = performance.now() + delayMs;
    timers.schedule(`countdown:cd_${i}`, delayMs, () => {
      lateness.push(performance.now() - due);
      if (lateness.length === count) done();
    });
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
    },
  ];
}
