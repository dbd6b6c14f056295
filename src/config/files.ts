// The configuration files: `todo-continuation.json` or `.jsonc` in the user's OpenCode config folder and in the
// project's `.opencode/` folder, as OpenCode's other plugins keep theirs. Reading one never throws: what is wrong
// with it is a sentence for the person who wrote it.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseJsonc } from "./jsonc.js";

export type FileScope = "user" | "project";

export interface ConfigFile {
  scope: FileScope;
  path: string;
}

export const FILE_NAMES = ["todo-continuation.jsonc", "todo-continuation.json"] as const;

/** `$XDG_CONFIG_HOME/opencode`, or `~/.config/opencode` when unset: where OpenCode reads its global config. */
export function userConfigFolder(env: NodeJS.ProcessEnv = process.env): string {
  const configHome = env.XDG_CONFIG_HOME?.trim() ? env.XDG_CONFIG_HOME : join(env.HOME?.trim() || homedir(), ".config");
  return join(configHome, "opencode");
}

export function projectConfigFolder(directory: string): string {
  return join(directory, ".opencode");
}

export interface FoundFiles {
  /** Lowest precedence first: the user's file, then the project's. */
  files: ConfigFile[];
  /** A second file beside the one read (`.json` beside `.jsonc`), said rather than merged. */
  warnings: string[];
}

export function findConfigFiles(directory: string, env: NodeJS.ProcessEnv = process.env): FoundFiles {
  const found: FoundFiles = { files: [], warnings: [] };
  const folders: Array<[FileScope, string]> = [
    ["user", userConfigFolder(env)],
    ["project", projectConfigFolder(directory)],
  ];
  for (const [scope, folder] of folders) {
    const present = FILE_NAMES.map((name) => join(folder, name)).filter((path) => existsSync(path));
    if (present.length === 0) continue;
    found.files.push({ scope, path: present[0]! });
    if (present.length > 1) found.warnings.push(`${present[1]} is ignored: ${present[0]} is read instead (keep one)`);
  }
  return found;
}

export type FileContent = { values: Record<string, unknown> } | { problem: string };

export function readConfigFile(path: string): FileContent {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    return { problem: `cannot read it: ${(error as Error).message}` };
  }
  let value: unknown;
  try {
    value = parseJsonc(text);
  } catch (error) {
    return { problem: `not valid JSON: ${(error as Error).message}` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return { problem: 'not an object of options: the file holds one object, such as { "countdownSeconds": 3 }' };
  return { values: value as Record<string, unknown> };
}
