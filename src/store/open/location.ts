// What a configured database location means, the same for the plugin, the TUI, the CLI and the service: a
// postgres:// or postgresql:// URL names a server; anything else with a scheme (mysql://, sqlite://, file://) is a
// mistake, refused rather than taken for a folder; `~` is the home folder; a relative path hangs off a base that the
// caller names (the project directory inside OpenCode, the current directory on a command line). Every message
// shows a URL without its password.
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

export class LocationError extends Error {
  constructor(
    message: string,
    /** What would have been accepted, for a configuration error. */
    readonly allowed: string,
  ) {
    super(message);
    this.name = "LocationError";
  }
}

const ALLOWED = "a file path (SQLite) or a postgres:// or postgresql:// URL";
const URL_SHAPE = "postgres://user:password@host:port/database";

const POSTGRES = /^postgres(ql)?:\/\//i;
const ANY_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

export function isPostgresUrl(location: string): boolean {
  return POSTGRES.test(location.trim());
}

/** The location as it may be shown: a URL without its password, whatever else is wrong with it. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, "//$1:***@");
  }
}

export interface LocationBase {
  /** What a relative path is resolved against. */
  directory: string;
  /** What `~` stands for (default: the user's home folder). */
  home?: string;
}

/** The database `given` names: a checked PostgreSQL URL as given, or an absolute file path; LocationError if neither. */
export function resolveLocation(given: string, base: LocationBase): string {
  const text = given.trim();
  if (text === "") throw new LocationError("the database location is empty", ALLOWED);
  if (POSTGRES.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new LocationError(`${redactUrl(text)} is not a valid URL (${URL_SHAPE})`, `a valid URL: ${URL_SHAPE}`);
    }
    if (url.hostname === "" && !url.searchParams.has("host"))
      throw new LocationError(`${redactUrl(text)} names no host (${URL_SHAPE})`, `a valid URL: ${URL_SHAPE}`);
    return text;
  }
  if (ANY_SCHEME.test(text))
    throw new LocationError(
      `${redactUrl(text)} is not a database todo-continuation can use: give a file path (SQLite) or a postgres:// URL`,
      ALLOWED,
    );
  // SQLite's name for a database that lives in memory only, not a file of the project.
  if (text === ":memory:") return text;
  if (text === "~" || text.startsWith("~/")) return join(base.home ?? homedir(), text.slice(1));
  return isAbsolute(text) ? text : resolve(base.directory, text);
}
