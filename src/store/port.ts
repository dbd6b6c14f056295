// The store as the engine (and every other writer: the TUI, the CLI, the service) sees it: reads, durable state changes,
// and liveness. Every state change is a transaction script of changes/ — written once, run by whichever database this
// is — so a rule lives in one place whatever the backend and whoever writes. Every method answers with a promise, so
// that an asynchronous driver (PostgreSQL) fits behind the same interface as SQLite's synchronous ones.
import type { Change, Script } from "./script.js";
import type { StoreProblem } from "./types.js";

export type * from "./types.js";

export interface EngineStore {
  /** Where the data lives, for messages: a file path, or a URL without its password. */
  readonly location: string;

  /** Runs reads (a script of statements that write nothing), outside any transaction. */
  read<T>(script: Script<T>): Promise<T>;
  /**
   * Runs a state change as one transaction: BEGIN IMMEDIATE on SQLite (every writer of the file takes turns); on
   * PostgreSQL a transaction holding the lock of the session it changes (changes to one session take turns across
   * processes and hosts, other sessions go on in parallel).
   */
  change<T>(change: Change<T>): Promise<T>;

  // ── liveness ────────────────────────────────────────────────────────────────
  /**
   * Says this owner is alive for another `leaseMs` (its `replicas` row: on PostgreSQL by the database's clock, which
   * fences claims), and checks that the database is still the one opened (a SQLite file deleted or replaced under a
   * running process raises nothing by itself). `directory`: the project folder it works for, when it has one (the TUI
   * says so: the server's toasts give way to the countdown it draws there).
   */
  heartbeat(owner: string, leaseMs: number, directory?: string): Promise<void>;
  /**
   * Whether another owner's lease still holds, as of the last heartbeat: respected when arming, waited for before
   * adopting. SQLite: its pid on this host is alive and its lease has not run out; PostgreSQL: its heartbeat is fresh
   * by the database's clock (and its pid is alive, when it is of this host).
   */
  ownerAlive(owner: string | null, leaseUntil: number | null, now: number): boolean;
  /** Says this owner is gone (its `replicas` row is deleted), so that nobody waits out its lease. */
  retire(owner: string): Promise<void>;

  // ── upkeep ──────────────────────────────────────────────────────────────────
  /** Rejects unless a write can be committed right now (without waiting for a lock) to the database opened. */
  probe(): Promise<void>;
  /** The store's own failure behind `error`, or undefined for anything else. */
  problemOf(error: unknown): StoreProblem | undefined;
  /**
   * Where a driver does not say why a server cannot be reached (Bun's client: "Connection closed"), finds out by
   * connecting to its address; absent where the driver's errors say it.
   */
  whyUnreachable?(): Promise<string | undefined>;
  close(): Promise<void>;
}
