// What a PostgreSQL failure means for the enforcer: the server stopped working for us (down, unreachable, read-only,
// too slow, out of connections or disk) or something else went wrong that is not the database's. Codes are
// SQLSTATEs (node-postgres puts them in `code`, Bun's client in `errno`); connection failures carry none.
import type { StoreProblem } from "../types.js";
import { AnswerTimeoutError } from "./bun-bounded-client.js";
import { IncompleteAnswerError } from "./rows.js";

/** The SQLSTATE of a failure, wherever the driver put it. */
export function pgErrorCode(error: unknown): string | undefined {
  for (
    let e = error as { code?: unknown; errno?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 4;
    depth++
  ) {
    if (typeof e.errno === "string" && /^[0-9A-Z]{5}$/.test(e.errno)) return e.errno;
    if (typeof e.code === "string" && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
    e = e.cause as typeof e;
  }
  return undefined;
}

function texts(error: unknown): string {
  const parts: string[] = [];
  for (
    let e = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 4;
    depth++
  ) {
    if (typeof e.code === "string") parts.push(e.code);
    if (typeof e.message === "string") parts.push(e.message);
    e = e.cause as typeof e;
  }
  return parts.join(" ");
}

/** Whether `error`, or one it was caused by (drizzle wraps what the driver threw), is one of `kinds`. */
function causedBy(error: unknown, kinds: ReadonlyArray<new (...args: never[]) => Error>): boolean {
  for (let e = error as { cause?: unknown } | undefined, depth = 0; e && depth < 4; depth++) {
    if (kinds.some((kind) => e instanceof kind)) return true;
    e = e.cause as typeof e;
  }
  return false;
}

/**
 * A transaction PostgreSQL aborted to break a deadlock or a serialization conflict with another: it rolled back whole,
 * and running it again is what the server asks of its client.
 */
export function abortedByConflict(error: unknown): boolean {
  const code = pgErrorCode(error);
  return code === "40P01" || code === "40001";
}

export function pgProblemOf(error: unknown): StoreProblem | undefined {
  if (causedBy(error, [IncompleteAnswerError, AnswerTimeoutError])) return "unavailable";
  const code = pgErrorCode(error);
  if (code) {
    if (code === "25006") return "read-only";
    if (code === "53100") return "full";
    // A lock not granted within lock_timeout, a statement cancelled by statement_timeout, a deadlock.
    if (code === "55P03" || code === "57014" || code === "40P01" || code === "40001") return "locked";
    // A database or table missing (dropped, or a server not set up yet) is probed like an outage: the probe
    // migrates once it can, where SQLite's "gone" means a deleted file that only a restart replaces.
    if (code === "XX001" || code === "XX002") return "damaged";
    // Class 08 (connection), 57P0x (shutdown, crash, cannot connect now), 53300 (too many connections).
    if (code.startsWith("08") || code.startsWith("57P") || code === "53300") return "unavailable";
    if (code === "3D000" || code === "42P01" || code === "3F000") return "unavailable";
  }
  const text = texts(error);
  if (
    /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN/.test(text) ||
    /Connection terminated|connection (is )?closed|timeout exceeded when trying to connect|timeout expired|Query read timeout/i.test(
      text,
    ) ||
    /ERR_POSTGRES_(CONNECTION|.*TIMEOUT|IDLE|LIFETIME|TLS)/.test(text) ||
    /Client has encountered a connection error|Cannot use a pool after calling end/i.test(text) ||
    // Bun's words for a connection the server ended under a transaction (idle past its timeout: a frozen process).
    /Failed to read data/.test(text)
  )
    return "unavailable";
  return undefined;
}
