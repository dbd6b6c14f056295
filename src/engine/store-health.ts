// When the database stops working under a running enforcer (read-only, disk full, locked for longer than the busy
// timeout, damaged, deleted), the host must not notice beyond one clear log line: the enforcer pauses itself, says
// why once, probes the file every few seconds, and says so again when it works and it resumes.
import { statSync } from "node:fs";
import type { LogLevel } from "../host/port.js";

export type StoreProblem = "read-only" | "full" | "locked" | "damaged" | "gone" | "unavailable";

const DESCRIPTIONS: Record<StoreProblem, string> = {
  "read-only": "is read-only",
  full: "cannot grow (the disk is full)",
  locked: "is locked by another process for longer than the busy timeout",
  damaged: "is damaged",
  gone: "was deleted or replaced while this process had it open",
  unavailable: "cannot be read or written",
};

/** SQLite's own failures (both drivers put `SQLITE_*` in `code` or the message); anything else is not ours to absorb. */
export function classifyStoreError(error: unknown): StoreProblem | undefined {
  const e = error as { code?: unknown; message?: unknown } | null;
  const text = `${typeof e?.code === "string" ? e.code : ""} ${typeof e?.message === "string" ? e.message : ""}`;
  if (!/SQLITE_|database|disk|readonly|read-only/i.test(text)) return undefined;
  if (/READONLY|read-?only/i.test(text)) return "read-only";
  if (/SQLITE_FULL|disk is full|database or disk is full|EFBIG|ENOSPC/i.test(text)) return "full";
  if (/SQLITE_BUSY|SQLITE_LOCKED|database is locked|database table is locked/i.test(text)) return "locked";
  if (/SQLITE_CORRUPT|SQLITE_NOTADB|malformed|not a database/i.test(text)) return "damaged";
  if (/SQLITE_IOERR|SQLITE_CANTOPEN|disk I\/O error|unable to open/i.test(text)) return "unavailable";
  return /SQLITE_/.test(text) ? "unavailable" : undefined;
}

function identity(path: string): string | undefined {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return undefined;
  }
}

export interface StoreHealthOptions {
  path: string;
  log: (level: LogLevel, message: string, extra?: Record<string, unknown>) => void;
  /** Throws if the file still does not work (a write transaction rolled back). */
  probe: () => void;
  /** Called once when the database fails (the enforcer drops what it cannot keep). */
  onFailed: () => void;
  /** Called when the file works again. */
  onRecovered: () => void;
  schedule: (delayMs: number, run: () => void) => void;
  probeIntervalMs: number;
}

export class StoreHealth {
  private problem: { kind: StoreProblem; since: number; failures: number } | undefined;
  private readonly fileIdentity: string | undefined;

  constructor(private readonly o: StoreHealthOptions) {
    this.fileIdentity = o.path === ":memory:" ? undefined : identity(o.path);
  }

  get healthy(): boolean {
    return this.problem === undefined;
  }

  get state(): { kind: StoreProblem; since: number; failures: number } | undefined {
    return this.problem ? { ...this.problem } : undefined;
  }

  /** True when `error` was the database failing (now reported, once); false for anything else. */
  report(error: unknown): boolean {
    const kind = classifyStoreError(error);
    if (!kind) return false;
    this.fail(kind, error instanceof Error ? error.message : String(error));
    return true;
  }

  /** A deleted or replaced file raises no SQLite error (the old inode keeps working): look for it. */
  checkFile(): void {
    if (this.fileIdentity === undefined || this.problem?.kind === "gone") return;
    if (identity(this.o.path) !== this.fileIdentity)
      this.fail("gone", "the file at the configured path is not the one that was opened");
  }

  private fail(kind: StoreProblem, detail: string): void {
    if (this.problem) {
      this.problem.failures++;
      return;
    }
    this.problem = { kind, since: Date.now(), failures: 1 };
    const retry =
      kind === "gone"
        ? "restart OpenCode (or the service) to start a new file"
        : `it is tried again every ${Number((this.o.probeIntervalMs / 1000).toFixed(1))} s`;
    this.o.log(
      "error",
      `todo-continuation paused: the database ${this.o.path} ${DESCRIPTIONS[kind]} (${detail}). OpenCode is not affected; ${retry}.`,
      { kind },
    );
    this.o.onFailed();
    if (kind !== "gone") this.o.schedule(this.o.probeIntervalMs, () => this.probe());
  }

  private probe(): void {
    if (!this.problem) return;
    try {
      this.o.probe();
      if (identity(this.o.path) !== this.fileIdentity) throw new Error("file replaced");
    } catch {
      this.o.schedule(this.o.probeIntervalMs, () => this.probe());
      return;
    }
    const { kind, since, failures } = this.problem;
    this.problem = undefined;
    this.o.log(
      "info",
      `todo-continuation resumed: the database ${this.o.path} works again after ${Math.round((Date.now() - since) / 1000)} s (${failures} failed write(s) while ${kind}).`,
    );
    this.o.onRecovered();
  }
}
