// What a SQLite failure means for the enforcer: the database stopped working (read-only, full, locked for longer than
// the busy timeout, damaged, deleted) or something else went wrong that is not the database's.
import { statSync } from "node:fs";
import type { StoreProblem } from "../types.js";

/** The file at the configured path is no longer the one this process opened (deleted, or replaced by another). */
export class StoreGoneError extends Error {
  constructor() {
    super("the file at the configured path is not the one that was opened");
    this.name = "StoreGoneError";
  }
}

/** SQLite's own failures (both drivers put `SQLITE_*` in `code` or the message); anything else is not ours to absorb. */
export function sqliteProblemOf(error: unknown): StoreProblem | undefined {
  if (error instanceof StoreGoneError) return "gone";
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

/** The identity of the file at `path` (device and inode): a deleted or replaced file raises no SQLite error. */
export function fileIdentity(path: string): string | undefined {
  if (path === ":memory:") return undefined;
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return undefined;
  }
}
