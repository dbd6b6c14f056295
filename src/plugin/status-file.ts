// What the server plugin last said about itself in a project: its version, its effective options and where each came
// from, what is wrong (a bad option, a database it could not open), what it warns of (another enforcer). One small
// JSON file per project directory in the user's state folder, because the plugin's own database may be the thing that
// failed. `doctor` and the TUI read it; nothing else depends on it, so writing it never fails the plugin.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export interface PluginStatus {
  /** The format of this file. */
  format: 1;
  /** The package version that wrote it. */
  version: string;
  directory: string;
  pid: number;
  /** ISO time of the plugin's start in that process. */
  startedAt: string;
  /** `on`; `off` (a problem keeps the enforcer from running); `memory` (its database could not be opened). */
  state: "on" | "off" | "memory";
  /** A few words for a narrow panel line ("off: invalid configuration"), when there is news. */
  headline?: string;
  /** The database it uses (a URL without its password), or the one it could not open. */
  database: string;
  /** What is wrong, one line each, with where it is and how to fix it. */
  problems: string[];
  /** What works but needs a person's eye (another enforcer, a config file ignored). */
  warnings: string[];
  /** The configuration files read, lowest precedence first. */
  files: string[];
  /** Each option's effective value and its source ("default", "plugin options", a file, a variable). */
  options: Record<string, { value: unknown; source: string }>;
}

/** `$XDG_STATE_HOME/opencode-todo-continuation/plugins`, or `~/.local/state/…` when unset. */
export function statusFolder(env: NodeJS.ProcessEnv = process.env): string {
  const stateHome = env.XDG_STATE_HOME?.trim()
    ? env.XDG_STATE_HOME
    : join(env.HOME?.trim() || homedir(), ".local", "state");
  return join(stateHome, "opencode-todo-continuation", "plugins");
}

/** The status file of the plugin that runs in `directory` (one per project directory). */
export function statusPath(directory: string, env: NodeJS.ProcessEnv = process.env): string {
  const key = createHash("sha256").update(directory).digest("hex").slice(0, 16);
  return join(statusFolder(env), `${key}.json`);
}

/** Written whole or not at all (a reader never sees half a file); the error, if any, is returned, never thrown. */
export function writeStatus(status: PluginStatus, env: NodeJS.ProcessEnv = process.env): Error | undefined {
  const path = statusPath(status.directory, env);
  try {
    mkdirSync(statusFolder(env), { recursive: true, mode: 0o700 });
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(status, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, path);
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

/** The status the plugin of `directory` wrote last, or undefined when there is none (or it cannot be read). */
export function readStatus(directory: string, env: NodeJS.ProcessEnv = process.env): PluginStatus | undefined {
  try {
    const status = JSON.parse(readFileSync(statusPath(directory, env), "utf8")) as PluginStatus;
    return status?.format === 1 ? status : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What identifies a piece of news: its words. OpenCode may start the plugin twice for one project (the TUI's server
 * does), and two starts that say the same must not be shown twice.
 */
export function statusNews(status: PluginStatus): string {
  const words = JSON.stringify([status.problems, status.warnings]);
  return createHash("sha256").update(words).digest("hex").slice(0, 16);
}

/** Where the TUI notes that it showed a piece of news, so that the server plugin does not show it a second time. */
function seenPath(directory: string, env: NodeJS.ProcessEnv): string {
  return `${statusPath(directory, env).slice(0, -".json".length)}.seen`;
}

export function markSeen(status: PluginStatus, env: NodeJS.ProcessEnv = process.env): void {
  try {
    writeFileSync(seenPath(status.directory, env), statusNews(status));
  } catch {
    // Then the server plugin shows it again: twice is better than never.
  }
}

/** The TUI showed this news at `since` or later (a TUI of an earlier OpenCode does not count for this one). */
export function wasSeen(status: PluginStatus, env: NodeJS.ProcessEnv = process.env, since = 0): boolean {
  try {
    const path = seenPath(status.directory, env);
    return readFileSync(path, "utf8") === statusNews(status) && statSync(path).mtimeMs >= since;
  } catch {
    return false;
  }
}
