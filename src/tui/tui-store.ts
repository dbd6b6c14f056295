// The TUI's database, opened the first time something needs it (a session drawn, a key in a session, an event) rather
// than while OpenCode starts: loading a driver and migrating would hold OpenCode's first frame. Once open, it says the
// TUI is there, with a heartbeat row for its folder: the server's countdown toasts give way to the countdown drawn here,
// and come back once the row is retired (the TUI closed) or its lease runs out (it crashed).
import type { OperatorStore } from "../store/operator/operator.js";

/** A waiting store (another process writing) must never freeze the TUI for long. */
const BUSY_TIMEOUT_MS = 200;
/** The heartbeat's pace, and how long one holds: a TUI that crashed stops counting as there within the lease. */
const PRESENCE_EVERY_MS = 5000;
const PRESENCE_LEASE_MS = 15_000;
/** After a failed open, the next need tries again no sooner than this. */
const REOPEN_AFTER_MS = 5000;

export class TuiStore {
  private opening: Promise<OperatorStore | undefined> | undefined;
  private failedAt = Number.NEGATIVE_INFINITY;
  private presence: ReturnType<typeof setInterval> | undefined;
  private disposed = false;
  /** Its `replicas` row's id, made when the store is opened (host/pid/random, as an engine's). */
  private owner = "";

  constructor(
    private readonly databasePath: string,
    private readonly directory: string,
    /** Told why the database cannot be used (one line in the panel), or `undefined` once it can again. */
    private readonly report: (problem: string | undefined) => void,
  ) {}

  /** The store, opened now if it is not yet; undefined while it cannot be (and `report` was told why). */
  get(): Promise<OperatorStore | undefined> {
    if (!this.opening && !this.disposed && Date.now() - this.failedAt >= REOPEN_AFTER_MS) this.opening = this.open();
    return this.opening ?? Promise.resolve(undefined);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.presence) clearInterval(this.presence);
    const store = await this.opening;
    this.opening = undefined;
    // Best effort: a file that is already gone must not break OpenCode's exit; the lease ends the row anyway.
    if (this.owner) await store?.retire(this.owner).catch(() => undefined);
    await store?.close().catch(() => undefined);
  }

  private async open(): Promise<OperatorStore | undefined> {
    try {
      const [{ openStore }, { newOwnerId }] = await Promise.all([
        import("../store/open/open.js"),
        import("../store/owner.js"),
      ]);
      this.owner ||= newOwnerId();
      const store = await openStore(this.databasePath, { busyTimeoutMs: BUSY_TIMEOUT_MS, kind: "tui" });
      if (this.disposed) {
        await store.close().catch(() => undefined);
        return undefined;
      }
      await store.heartbeat(this.owner, PRESENCE_LEASE_MS, this.directory);
      this.presence = setInterval(() => void this.beat(store), PRESENCE_EVERY_MS);
      this.presence.unref?.();
      this.report(undefined);
      return store;
    } catch (error) {
      this.failedAt = Date.now();
      this.opening = undefined;
      this.report(oneLine(error));
      return undefined;
    }
  }

  private async beat(store: OperatorStore): Promise<void> {
    try {
      await store.heartbeat(this.owner, PRESENCE_LEASE_MS, this.directory);
    } catch (error) {
      this.report(`the database: ${oneLine(error)}`);
      // A file deleted or replaced under the TUI: the next need opens the one now at the path.
      if (store.problemOf(error) === "gone" && !this.disposed) {
        if (this.presence) clearInterval(this.presence);
        this.opening = undefined;
        await store.close().catch(() => undefined);
      }
    }
  }
}

export function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const line = text.split("\n")[0]!;
  return line.length > 120 ? `${line.slice(0, 120)}…` : line;
}
