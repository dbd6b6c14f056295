// The enforcer's lifecycle, one mode at a time, changed only through `enter()`, which refuses a change the table below
// does not allow (a programming error, never a runtime condition):
//
//   running ◀──── the store works again ────▶ paused_store
//      │                                            │
//      └──────────────── dispose() ─────────────────┴──▶ disposing ──▶ disposed
//
// running       events are handled and decisions made (from construction on; `start()` adds recovery, the lease
//               loop and retention, and is not a mode of its own).
// paused_store  the database failed: only live facts are kept in memory (no decision without its audit row); the
//               store is probed until it works again.
// disposing     no new event, decision or timer; attempts in flight finish and are recorded.
// disposed      nothing runs; the store may be closed.
export type Mode = "running" | "paused_store" | "disposing" | "disposed";

const ALLOWED: { readonly [M in Mode]: readonly Mode[] } = {
  running: ["paused_store", "disposing"],
  paused_store: ["running", "disposing"],
  disposing: ["disposed"],
  disposed: [],
};

export class LifecycleError extends Error {
  constructor(from: Mode, to: Mode) {
    super(`the enforcer cannot go from ${from} to ${to}`);
    this.name = "LifecycleError";
  }
}

export class Lifecycle {
  private current: Mode = "running";

  get mode(): Mode {
    return this.current;
  }

  enter(next: Mode): void {
    if (!ALLOWED[this.current].includes(next)) throw new LifecycleError(this.current, next);
    this.current = next;
  }

  /** Decisions may be made and written. */
  get deciding(): boolean {
    return this.current === "running";
  }

  /** Events are looked at (to decide, or only to keep the live facts while the store is paused). */
  get listening(): boolean {
    return this.current === "running" || this.current === "paused_store";
  }

  get ending(): boolean {
    return this.current === "disposing" || this.current === "disposed";
  }

  /** Words for `stats()` and logs. */
  describe(): string {
    switch (this.current) {
      case "running":
        return "running";
      case "paused_store":
        return "paused: the database does not work";
      case "disposing":
        return "stopping: waiting for prompt calls in flight";
      case "disposed":
        return "stopped";
      default:
        return assertNever(this.current);
    }
  }
}

function assertNever(mode: never): never {
  throw new Error(`unknown mode ${String(mode)}`);
}
