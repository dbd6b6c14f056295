// One timer for many deadlines: a binary min-heap of keyed entries on the monotonic clock, and a single setTimeout
// for the earliest. Thousands of armed countdowns cost one timer, and a wall-clock jump cannot move any of them.
import type { Clock } from "./clock.js";

interface Entry {
  key: string;
  due: number;
  seq: number;
  run: () => void;
  cancelled: boolean;
}

/** setTimeout's largest delay; longer waits are re-armed in steps. */
const MAX_DELAY = 2 ** 31 - 1;

export class TimerQueue {
  private readonly heap: Entry[] = [];
  private readonly byKey = new Map<string, Entry>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerDue = Infinity;
  private seq = 0;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly onError: (key: string, error: unknown) => void = () => {},
  ) {}

  get size(): number {
    return this.byKey.size;
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  /** Runs `run` after `delayMs` (monotonic). Scheduling an existing key replaces it. */
  schedule(key: string, delayMs: number, run: () => void): void {
    if (this.stopped) return;
    this.cancel(key);
    const entry: Entry = {
      key,
      due: this.clock.monotonic() + Math.max(0, delayMs),
      seq: this.seq++,
      run,
      cancelled: false,
    };
    this.byKey.set(key, entry);
    this.push(entry);
    if (entry.due < this.timerDue) this.arm();
  }

  cancel(key: string): boolean {
    const entry = this.byKey.get(key);
    if (!entry) return false;
    entry.cancelled = true;
    this.byKey.delete(key);
    // Cancelled entries stay in the heap until they reach the top; compact when they dominate it.
    if (this.heap.length > 64 && this.heap.length > 2 * this.byKey.size) this.compact();
    return true;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.heap.length = 0;
    this.byKey.clear();
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDue = Infinity;
    while (this.heap.length > 0 && this.heap[0]!.cancelled) this.pop();
    const next = this.heap[0];
    if (!next || this.stopped) return;
    const delay = Math.min(MAX_DELAY, Math.max(0, next.due - this.clock.monotonic()));
    this.timerDue = next.due;
    this.timer = setTimeout(() => this.fire(), Math.ceil(delay));
    this.timer.unref?.();
  }

  private fire(): void {
    this.timer = undefined;
    this.timerDue = Infinity;
    const now = this.clock.monotonic();
    // Only what was scheduled before this pass: an entry that schedules itself again at 0 waits for the next timer
    // instead of looping here forever.
    const scheduledBefore = this.seq;
    while (this.heap.length > 0 && this.heap[0]!.due <= now && this.heap[0]!.seq < scheduledBefore) {
      const entry = this.pop()!;
      if (entry.cancelled) continue;
      this.byKey.delete(entry.key);
      try {
        entry.run();
      } catch (error) {
        this.onError(entry.key, error);
      }
    }
    this.arm();
  }

  private compact(): void {
    const live = this.heap.filter((e) => !e.cancelled);
    this.heap.length = 0;
    for (const entry of live) this.push(entry);
    this.arm();
  }

  private less(a: Entry, b: Entry): boolean {
    return a.due < b.due || (a.due === b.due && a.seq < b.seq);
  }

  private push(entry: Entry): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): Entry | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let smallest = i;
        if (l < heap.length && this.less(heap[l]!, heap[smallest]!)) smallest = l;
        if (r < heap.length && this.less(heap[r]!, heap[smallest]!)) smallest = r;
        if (smallest === i) break;
        [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
        i = smallest;
      }
    }
    return top;
  }
}
