// TimerQueue promises: an entry runs once, after its delay on the monotonic clock, unless cancelled or replaced by an
// entry of the same key; due entries run in deadline order (ties in scheduling order); however many entries are armed,
// one setTimeout is pending; a wall-clock jump moves no deadline; waits longer than setTimeout allows are re-armed in
// steps; cancelled entries do not pile up; stop() ends everything; a throwing entry is reported and the rest still run.
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { systemClock, type Clock } from "../../src/engine/clock.js";
import { TimerQueue } from "../../src/engine/timer-queue.js";
import { advance, useFakeTime } from "../support/fake-time.js";

useFakeTime();

const MAX_DELAY = 2 ** 31 - 1;
const HOURS = 3 * 3_600_000;

/** A queue that records which keys ran, in order. */
function recording(clock: Clock = systemClock) {
  const ran: string[] = [];
  const errors: Array<{ key: string; error: unknown }> = [];
  const queue = new TimerQueue(clock, (key, error) => errors.push({ key, error }));
  const schedule = (key: string, delayMs: number) => queue.schedule(key, delayMs, () => ran.push(key));
  return { queue, ran, errors, schedule };
}

/** Compaction has no visible effect but memory: the heap's length is the only place to see it. */
const heapLength = (queue: TimerQueue) => (queue as unknown as { heap: unknown[] }).heap.length;

describe("scheduling and cancelling by key", () => {
  it("runs an entry once, at its delay and not a millisecond before", async () => {
    const { queue, ran, schedule } = recording();
    schedule("a", 1000);
    expect(queue.has("a")).toBe(true);
    await advance(999);
    expect(ran).toEqual([]);
    await advance(1);
    expect(ran).toEqual(["a"]);
    expect(queue.has("a")).toBe(false);
    expect(queue.size).toBe(0);
    await advance(60_000);
    expect(ran).toEqual(["a"]);
  });

  it("a negative delay means now: it runs on the next turn, behind the entries already due now", async () => {
    const { ran, schedule } = recording();
    schedule("zero", 0);
    schedule("negative", -500);
    expect(ran).toEqual([]);
    await advance(0);
    expect(ran).toEqual(["zero", "negative"]);
  });

  it("scheduling a key again replaces the entry, whether the new deadline is later or earlier", async () => {
    const { queue, ran } = recording();
    queue.schedule("later", 100, () => ran.push("later:first"));
    queue.schedule("later", 500, () => ran.push("later:second"));
    queue.schedule("earlier", 800, () => ran.push("earlier:first"));
    queue.schedule("earlier", 50, () => ran.push("earlier:second"));
    expect(queue.size).toBe(2);
    await advance(50);
    // The earlier replacement must re-arm the timer, which was set for 100 ms.
    expect(ran).toEqual(["earlier:second"]);
    await advance(449);
    expect(ran).toEqual(["earlier:second"]);
    await advance(1);
    expect(ran).toEqual(["earlier:second", "later:second"]);
    await advance(1000);
    expect(ran).toEqual(["earlier:second", "later:second"]);
  });

  it("a cancelled entry never runs; cancelling the earliest leaves the next one at its own time", async () => {
    const { queue, ran, schedule } = recording();
    schedule("first", 100);
    schedule("second", 300);
    expect(queue.cancel("first")).toBe(true);
    expect(queue.cancel("first")).toBe(false);
    expect(queue.cancel("never-scheduled")).toBe(false);
    expect(queue.has("first")).toBe(false);
    expect(queue.size).toBe(1);
    await advance(299);
    expect(ran).toEqual([]);
    await advance(1);
    expect(ran).toEqual(["second"]);
  });

  it("a key can be scheduled again after it ran or was cancelled", async () => {
    const { queue, ran, schedule } = recording();
    schedule("k", 10);
    await advance(10);
    schedule("k", 10);
    await advance(10);
    schedule("k", 10);
    queue.cancel("k");
    schedule("k", 10);
    await advance(10);
    expect(ran).toEqual(["k", "k", "k"]);
  });

  it("an entry scheduled by a running entry waits its own delay from then", async () => {
    const { queue, ran } = recording();
    queue.schedule("outer", 100, () => {
      ran.push("outer");
      queue.schedule("inner", 50, () => ran.push("inner"));
    });
    await advance(149);
    expect(ran).toEqual(["outer"]);
    await advance(1);
    expect(ran).toEqual(["outer", "inner"]);
  });

  it("an entry that schedules itself again at 0 runs once per pass, not in a loop that never yields", async () => {
    const { queue } = recording();
    let runs = 0;
    const again = () => {
      runs++;
      queue.schedule("again", 0, again);
    };
    queue.schedule("again", 0, again);
    await vi.advanceTimersToNextTimerAsync();
    expect(runs).toBe(1);
    await vi.advanceTimersToNextTimerAsync();
    expect(runs).toBe(2);
    queue.stop();
  });
});

describe("order of due entries", () => {
  it("runs by deadline, ties in the order they were scheduled", async () => {
    const { ran, schedule } = recording();
    schedule("c", 300);
    schedule("a", 100);
    schedule("b1", 200);
    schedule("b2", 200);
    schedule("b3", 200);
    await advance(300);
    expect(ran).toEqual(["a", "b1", "b2", "b3", "c"]);
  });

  it("a replaced key goes behind the entries already waiting for the same deadline", async () => {
    const { ran, schedule } = recording();
    schedule("x", 100);
    schedule("y", 100);
    schedule("x", 100);
    await advance(100);
    expect(ran).toEqual(["y", "x"]);
  });

  // Many entries due in one pass (the process was asleep): the heap alone decides the order. A monotonic clock that
  // the test moves by hand makes every entry due when the single timer fires. Few distinct delays make ties common,
  // and enough keys make the heap large enough to be compacted (which re-inserts entries out of schedule order).
  it("any mix of schedules, replacements and cancellations runs the live entries in (deadline, schedule) order", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({
              op: fc.constant("schedule" as const),
              key: fc.integer({ min: 0, max: 150 }),
              delay: fc.nat(20),
            }),
            fc.record({ op: fc.constant("cancel" as const), key: fc.integer({ min: 0, max: 150 }) }),
          ),
          { maxLength: 600 },
        ),
        (ops) => {
          let mono = 0;
          const clock: Clock = { now: () => Date.now(), monotonic: () => mono };
          const { queue, ran } = recording(clock);
          const model = new Map<string, { due: number; seq: number }>();
          ops.forEach((o, seq) => {
            const key = `k${o.key}`;
            if (o.op === "schedule") {
              queue.schedule(key, o.delay, () => ran.push(key));
              model.set(key, { due: o.delay, seq });
            } else {
              expect(queue.cancel(key)).toBe(model.delete(key));
            }
          });
          expect(queue.size).toBe(model.size);
          mono = 1_000;
          vi.advanceTimersByTime(21);
          const expected = [...model.entries()]
            .sort(([, a], [, b]) => a.due - b.due || a.seq - b.seq)
            .map(([key]) => key);
          expect(ran).toEqual(expected);
          expect(queue.size).toBe(0);
          queue.stop();
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("one setTimeout for many entries", () => {
  it("a thousand armed entries hold one pending timer, and none once they have all run", async () => {
    const { ran, schedule } = recording();
    for (let i = 0; i < 1000; i++) schedule(`e${i}`, 1 + ((i * 7919) % 5000));
    expect(vi.getTimerCount()).toBe(1);
    await advance(2500);
    expect(vi.getTimerCount()).toBe(1);
    await advance(2500);
    expect(ran).toHaveLength(1000);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe.each([
  ["forward", HOURS],
  ["backward", -HOURS],
])("the wall clock jumping %s by 3 hours", (_name, delta) => {
  it("moves no deadline: each entry runs after its own delay, measured on the monotonic clock", async () => {
    const { ran, schedule } = recording();
    schedule("soon", 10_000);
    schedule("in-an-hour", 3_600_000);
    await advance(1_000);
    vi.setSystemTime(Date.now() + delta);
    await advance(8_999);
    expect(ran).toEqual([]);
    // Forward, a wall-clock deadline would make the hour-long entry due with the first; backward, the first would
    // wait three more hours.
    await advance(1);
    expect(ran).toEqual(["soon"]);
    await advance(3_600_000 - 10_001);
    expect(ran).toEqual(["soon"]);
    await advance(1);
    expect(ran).toEqual(["soon", "in-an-hour"]);
  });
});

describe("waits longer than setTimeout allows", () => {
  it("are re-armed in steps of the largest delay, and run at their deadline", async () => {
    const { ran, schedule } = recording();
    const thirtyDays = 30 * 86_400_000;
    const start = performance.now();
    schedule("long", thirtyDays);
    // An unclamped delay overflows, and Node (like the fake timers) then fires after 1 ms.
    await vi.advanceTimersToNextTimerAsync();
    expect(performance.now() - start).toBe(MAX_DELAY);
    expect(ran).toEqual([]);
    await vi.advanceTimersToNextTimerAsync();
    expect(performance.now() - start).toBe(thirtyDays);
    expect(ran).toEqual(["long"]);
  });

  it("a short entry scheduled during a long wait still runs on time", async () => {
    const { ran, schedule } = recording();
    schedule("long", 60 * 86_400_000);
    await advance(1_000);
    schedule("short", 500);
    await advance(500);
    expect(ran).toEqual(["short"]);
  });
});

describe("compaction of cancelled entries", () => {
  it("replacing one key again and again keeps the heap small", () => {
    const { queue, schedule } = recording();
    for (let i = 0; i < 10_000; i++) schedule("countdown", 60_000 + i);
    expect(queue.size).toBe(1);
    expect(heapLength(queue)).toBeLessThanOrEqual(66);
  });

  it("cancelling most entries drops them from the heap, and the rest still run in order at their time", async () => {
    const { queue, ran, schedule } = recording();
    for (let i = 0; i < 1000; i++) schedule(`e${i}`, 1000 + i);
    for (let i = 0; i < 1000; i++) if (i % 10 !== 0) queue.cancel(`e${i}`);
    expect(queue.size).toBe(100);
    expect(heapLength(queue)).toBeLessThanOrEqual(2 * queue.size);
    await advance(1000);
    expect(ran).toEqual(["e0"]);
    await advance(999);
    expect(ran).toEqual(Array.from({ length: 100 }, (_, i) => `e${i * 10}`));
  });

  it("entries with the same deadline keep their scheduling order through a compaction", async () => {
    const { queue, ran, schedule } = recording();
    // The earlier deadline of "c" lifts it to the root, which leaves "b" ahead of "a" in the heap's array: compaction
    // re-inserts them in that array order, and only the tie-break on scheduling order puts "a" first again.
    schedule("a", 9);
    schedule("b", 9);
    schedule("c", 5);
    schedule("d", 9);
    for (let i = 0; i < 70; i++) schedule(`filler${i}`, 100);
    queue.cancel("c");
    for (let i = 0; i < 70; i++) queue.cancel(`filler${i}`);
    expect(heapLength(queue)).toBeLessThan(70);
    await advance(9);
    expect(ran).toEqual(["a", "b", "d"]);
  });
});

describe("stop()", () => {
  it("drops every entry, clears the timer and ignores later schedules", async () => {
    const { queue, ran, schedule } = recording();
    schedule("a", 100);
    schedule("b", 200);
    queue.stop();
    expect(queue.size).toBe(0);
    expect(queue.has("a")).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    schedule("c", 10);
    expect(queue.has("c")).toBe(false);
    await advance(1000);
    expect(ran).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("a throwing entry", () => {
  it("is reported with its key through onError, and the entries due with it and after it still run", async () => {
    const { queue, ran, errors, schedule } = recording();
    const boom = new Error("boom");
    schedule("before", 100);
    queue.schedule("thrower", 100, () => {
      throw boom;
    });
    schedule("with", 100);
    schedule("after", 200);
    await advance(100);
    expect(ran).toEqual(["before", "with"]);
    expect(errors).toEqual([{ key: "thrower", error: boom }]);
    await advance(100);
    expect(ran).toEqual(["before", "with", "after"]);
    schedule("later", 10);
    await advance(10);
    expect(ran).toEqual(["before", "with", "after", "later"]);
  });

  it("without an onError is swallowed, not thrown out of the timer", async () => {
    const queue = new TimerQueue(systemClock);
    const ran: string[] = [];
    queue.schedule("thrower", 10, () => {
      throw new Error("boom");
    });
    queue.schedule("next", 10, () => ran.push("next"));
    await expect(advance(10)).resolves.toBeDefined();
    expect(ran).toEqual(["next"]);
  });
});
