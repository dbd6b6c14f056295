// The enforcer's lifecycle, one mode at a time, changed only through `enter()` (modes.ts), which refuses a change the
// table below does not allow (a programming error, never a runtime condition):
//
//   running ◀──── the store works again ────▶ paused_store
//      │                                            │
//      └──────────────── dispose() ─────────────────┴──▶ disposing ──▶ disposed
//
// running       events are handled and decisions made (from construction on; `start()` adds recovery, the lease
//               loop, retention and the notice sender, and is not a mode of its own).
// paused_store  the database failed: only live facts are kept in memory (no decision without its audit row); the
//               store is probed until it works again.
// disposing     no new event, decision or timer; the start under way ends, the background loops stop, attempts in
//               flight finish and are recorded.
// disposed      nothing runs; the store may be closed.
import { Modes, type ModeTable } from "./modes.js";

export type Mode = "running" | "paused_store" | "disposing" | "disposed";

const ENFORCER_MODES: ModeTable<Mode> = {
  running: ["paused_store", "disposing"],
  paused_store: ["running", "disposing"],
  disposing: ["disposed"],
  disposed: [],
};

/** `Started`: what the enforcer's start resolves with (its recovery report). */
export class Lifecycle<Started = unknown> extends Modes<Mode, Started> {
  constructor() {
    super({
      what: "the enforcer",
      table: ENFORCER_MODES,
      first: "running",
      stopping: "disposing",
      stopped: "disposed",
    });
  }

  /** Decisions may be made and written. */
  get deciding(): boolean {
    return this.mode === "running";
  }

  /** Events are looked at (to decide, or only to keep the live facts while the store is paused). */
  get listening(): boolean {
    return this.mode === "running" || this.mode === "paused_store";
  }

  /** Words for `stats()` and logs. */
  describe(): string {
    switch (this.mode) {
      case "running":
        return "running";
      case "paused_store":
        return "paused: the database does not work";
      case "disposing":
        return "stopping: waiting for prompt calls in flight";
      case "disposed":
        return "stopped";
      default:
        return assertNever(this.mode);
    }
  }
}

function assertNever(mode: never): never {
  throw new Error(`unknown mode ${String(mode)}`);
}
