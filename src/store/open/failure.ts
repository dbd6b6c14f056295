// What went wrong with a database, in one short line for a person: the driver's own words and, when they are known,
// what they mean ("nothing answers at 127.0.0.1:1"). Never the statement or its parameters (drizzle puts both in front
// of the driver's words, hundreds of characters of them), never a password. The plugin's log, the service's log and
// the CLI's errors all say a database failure this way.
import { connect } from "node:net";
import { StoreOpenError } from "./open-error.js";
import { pgErrorCode, pgProblemOf } from "../pg/problems.js";
import { sqliteProblemOf } from "../sqlite/problems.js";

const MAX_LENGTH = 240;

/** `error` and its causes, outermost first (drizzle wraps the driver's error in its own). */
function chain(error: unknown): Array<{ message?: unknown; cause?: unknown }> {
  const errors: Array<{ message?: unknown; cause?: unknown }> = [];
  for (let e = error as { message?: unknown; cause?: unknown } | undefined; e && errors.length < 4;) {
    errors.push(e);
    e = e.cause as typeof e;
  }
  return errors;
}

/** The driver's words down the cause chain, each once, without drizzle's "Failed query: <sql> params: …" wrappers. */
function driverWords(error: unknown): string {
  const parts: string[] = [];
  for (const e of chain(error)) {
    const message = typeof e.message === "string" ? e.message.replace(/\s+/g, " ").trim() : "";
    if (message && !message.startsWith("Failed query:") && !parts.some((p) => p.includes(message))) parts.push(message);
  }
  if (parts.length > 0) return parts.join(": ");
  if (error instanceof Error) return `${error.name} without a message`;
  try {
    // JSON.stringify answers undefined (it does not throw) for undefined, a function or a symbol.
    return typeof error === "string" ? error : (JSON.stringify(error) ?? String(error));
  } catch {
    return String(error);
  }
}

/** Host and port of a PostgreSQL URL. */
function hostPort(location: string | undefined): { host: string; port: number } | undefined {
  try {
    const url = new URL(location ?? "");
    if (url.hostname) return { host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port || 5432) };
  } catch {
    // Not a URL.
  }
  return undefined;
}

/** host:port of a PostgreSQL URL, for "nothing answers at …". */
function addressOf(location: string | undefined): string {
  const address = hostPort(location);
  return address ? `${address.host}:${address.port}` : "that address";
}

/** A network failure's words, as Node's and Bun's sockets say them. */
export const NETWORK_CAUSE = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN/;

/**
 * Why nothing answers at a PostgreSQL URL's address, found by connecting to it ("connect ECONNREFUSED 127.0.0.1:1"),
 * or undefined when something accepts the connection. Bun's client says only "Connection closed" whatever happened.
 */
export function whyUnreachable(location: string, timeoutMs = 2000): Promise<string | undefined> {
  const address = hostPort(location);
  if (!address) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const socket = connect(address);
    const done = (why: string | undefined) => {
      socket.destroy();
      resolve(why);
    };
    socket.setTimeout(timeoutMs, () => done(`connect ETIMEDOUT ${address.host}:${address.port}`));
    socket.once("connect", () => done(undefined));
    socket.once("error", (error: NodeJS.ErrnoException) =>
      done(`connect ${error.code ?? error.message} ${address.host}:${address.port}`),
    );
  });
}

function clip(text: string): string {
  return text.length > MAX_LENGTH ? `${text.slice(0, MAX_LENGTH - 1)}…` : text;
}

/** What a SQLite failure means for the file, when its words say. */
function sqliteMeaningOf(words: string): string | undefined {
  if (/not a database|malformed|file is encrypted/i.test(words)) return "the file is not a valid SQLite database";
  if (/readonly|read-only|attempt to write/i.test(words)) return "the file or its folder is read-only";
  if (/locked|busy/i.test(words)) return "the file is locked by another process";
  return undefined;
}

/** What a database's failure means, when its code or words say; undefined for any other error. */
function meaningOf(error: unknown, words: string, location: string | undefined): string | undefined {
  const code = pgErrorCode(error);
  if (!code && chain(error).some((e) => sqliteProblemOf(e))) return sqliteMeaningOf(words);
  if (!code && !pgProblemOf(error)) return undefined;
  if (code === "3D000") return "the database does not exist";
  if (code === "28P01" || code === "28000") return "the server refused the credentials";
  if (code === "25006") return "the server is read-only";
  if (/ECONNREFUSED|connection refused/i.test(words)) return `nothing answers at ${addressOf(location)}`;
  if (/timeout|timed out/i.test(words)) return "the server did not answer in time";
  return undefined;
}

/**
 * `error` in one line of at most 240 characters; `location` (the database's URL without its password) names the
 * address nothing answers at, `seen` what whyUnreachable found there. Any error may be given: one that is not a database server's is said in its own words.
 */
export function describeDatabaseFailure(error: unknown, location?: string, seen?: string): string {
  // A driver may quote the URL it was given, password and all.
  const words = [seen, driverWords(error)]
    .filter(Boolean)
    .join(": ")
    .replace(/\/\/([^:/@\s]*):[^@\s/]*@/g, "//$1:***@");
  // An open failure was described when it was made: its words already say what they mean.
  const meaning = error instanceof StoreOpenError ? undefined : meaningOf(error, words, location);
  return clip(meaning ? `${meaning} (${words})` : words);
}
