import { homedir } from "node:os";
import { join } from "node:path";
import { resolveLocation } from "./location.js";

/** `$XDG_DATA_HOME/opencode/todo-continuation.db`, or `~/.local/share/opencode/todo-continuation.db` when unset. */
export function defaultDatabasePath(env: NodeJS.ProcessEnv = process.env): string {
  const dataHome =
    env.XDG_DATA_HOME && env.XDG_DATA_HOME.trim() !== "" ? env.XDG_DATA_HOME : join(homedir(), ".local", "share");
  return join(dataHome, "opencode", "todo-continuation.db");
}

/** The file drizzle-kit migrates: `TODO_CONTINUATION_DB` when set (read as everywhere else), else the default. */
export function configuredDatabasePath(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.TODO_CONTINUATION_DB;
  return fromEnv && fromEnv.trim() !== ""
    ? resolveLocation(fromEnv, { directory: process.cwd() })
    : defaultDatabasePath(env);
}
