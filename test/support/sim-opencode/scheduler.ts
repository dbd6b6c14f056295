// One timer for a whole process of simulated servers: a binary min-heap of what is due when (turn ends, delayed
// answers), and a single setTimeout armed for the earliest. Thousands of sessions cost heap slots, not timers.

/** Something that happens at a time: a turn ending, an answer sent. */
export interface Due {
  due(now: number): void;
}

export class Scheduler {
  private readonly at: number[] = [];
  private readonly order: number[] = [];
  private readonly tasks: Due[] = [];
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Infinity;
  private stopped = false;

  get size(): number {
    return this.tasks.length;
  }

  /** `task` runs at `when` (epoch ms), after every task scheduled earlier for the same time. */
  schedule(when: number, task: Due): void {
    if (this.stopped) return;
    this.push(when, this.seq++, task);
    if (when < this.armedFor) this.arm(when);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.at.length = this.order.length = this.tasks.length = 0;
  }

  private arm(when: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.armedFor = when;
    this.timer = setTimeout(() => this.run(), Math.max(0, when - Date.now()));
  }

  private run(): void {
    this.timer = undefined;
    this.armedFor = Infinity;
    const now = Date.now();
    // Tasks due now may schedule more for now: they run in this same pass.
    while (this.tasks.length > 0 && this.at[0]! <= now) {
      const task = this.pop();
      try {
        task.due(now);
      } catch (error) {
        // A bug in one session must not stop every other one's clock: report it and go on.
        process.emitWarning(`sim-opencode: a scheduled task threw: ${(error as Error).stack ?? String(error)}`);
      }
    }
    if (this.tasks.length > 0 && !this.stopped) this.arm(this.at[0]!);
  }

  private less(i: number, j: number): boolean {
    return this.at[i]! < this.at[j]! || (this.at[i] === this.at[j] && this.order[i]! < this.order[j]!);
  }

  private swap(i: number, j: number): void {
    const { at, order, tasks } = this;
    const when = at[i]!;
    at[i] = at[j]!;
    at[j] = when;
    const seq = order[i]!;
    order[i] = order[j]!;
    order[j] = seq;
    const task = tasks[i]!;
    tasks[i] = tasks[j]!;
    tasks[j] = task;
  }

  private push(when: number, seq: number, task: Due): void {
    this.at.push(when);
    this.order.push(seq);
    this.tasks.push(task);
    let i = this.tasks.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private pop(): Due {
    const top = this.tasks[0]!;
    const last = this.tasks.length - 1;
    this.swap(0, last);
    this.at.pop();
    this.order.pop();
    this.tasks.pop();
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < last && this.less(left, smallest)) smallest = left;
      if (right < last && this.less(right, smallest)) smallest = right;
      if (smallest === i) break;
      this.swap(i, smallest);
      i = smallest;
    }
    return top;
  }
}
